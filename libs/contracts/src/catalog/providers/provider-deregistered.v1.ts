import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { DiscoveryStream } from '../streams';
import { ReportSequenceSchema } from './providers.schemas';

export const ProviderDeregistered = defineEvent({
  type: 'provider.deregistered',
  version: 1,
  subject: 'discovery.provider.deregistered.v1',
  stream: DiscoveryStream.name,
  description: 'A provider left the network.',
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    sequence: ReportSequenceSchema,
    at: UtcTimestampSchema,
    reason: z.string().max(256),
  }),
});
