import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { DiscoveryStream } from '../streams';

export const ProviderOnline = defineEvent({
  type: 'provider.online',
  version: 1,
  subject: 'discovery.provider.online.v1',
  stream: DiscoveryStream.name,
  description: 'A provider is heard from again (or for the first time).',
  schema: z.strictObject({ providerId: EdgeIdSchema, at: UtcTimestampSchema }),
});
