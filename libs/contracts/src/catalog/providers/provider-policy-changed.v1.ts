import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { DiscoveryStream } from '../streams';
import { PolicySummarySchema } from './policy.schemas';
import { ReportSequenceSchema } from './providers.schemas';

export const ProviderPolicyChanged = defineEvent({
  type: 'provider.policy-changed',
  version: 1,
  subject: 'discovery.provider.policy-changed.v1',
  stream: DiscoveryStream.name,
  description: 'A provider changed what it shares.',
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    sequence: ReportSequenceSchema,
    at: UtcTimestampSchema,
    policy: PolicySummarySchema,
  }),
});
