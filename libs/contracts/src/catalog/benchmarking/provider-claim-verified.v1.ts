import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';
import { ClaimCheckSchema } from './claim-check.schemas';

export const ProviderClaimVerified = defineEvent({
  type: 'provider.claim.verified',
  version: 1,
  subject: 'benchmarking.provider.claim.verified.v1',
  stream: BenchmarkingStream.name,
  description: "A provider's measured performance matches what its inventory claims, within tolerance.",
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    profileId: RequestIdSchema,
    checks: z.array(ClaimCheckSchema).max(1024),
    at: UtcTimestampSchema,
  }),
});
