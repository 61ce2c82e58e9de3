import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { DiscoveryStream } from '../streams';
import { ReportSequenceSchema } from './providers.schemas';
import { EdgeReservationSchema } from './reservation.schemas';

export const ProviderReservationsChanged = defineEvent({
  type: 'provider.reservations-changed',
  version: 1,
  subject: 'discovery.provider.reservations-changed.v1',
  stream: DiscoveryStream.name,
  description: "The GPUs a provider's edge holds for jobs changed.",
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    sequence: ReportSequenceSchema,
    at: UtcTimestampSchema,
    reservations: z.array(EdgeReservationSchema).max(64),
  }),
});
