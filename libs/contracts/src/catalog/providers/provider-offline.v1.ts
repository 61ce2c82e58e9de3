import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { DiscoveryStream } from '../streams';

export const ProviderOffline = defineEvent({
  type: 'provider.offline',
  version: 1,
  subject: 'discovery.provider.offline.v1',
  stream: DiscoveryStream.name,
  description: 'A provider was silent for longer than the liveness window; its GPUs are not offered.',
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    at: UtcTimestampSchema,
    lastSeenAt: UtcTimestampSchema.nullable(),
    reason: z.enum(['heartbeat-timeout']),
  }),
});
