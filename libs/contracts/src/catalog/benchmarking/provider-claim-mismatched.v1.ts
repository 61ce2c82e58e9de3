import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, text, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';
import { ClaimCheckSchema } from './claim-check.schemas';

export const ProviderClaimMismatched = defineEvent({
  type: 'provider.claim.mismatched',
  version: 1,
  subject: 'benchmarking.provider.claim.mismatched.v1',
  stream: BenchmarkingStream.name,
  description:
    "A provider's measurements fall outside the tolerance of what its inventory claims; carries the evidence.",
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    profileId: RequestIdSchema,
    /** The checks that failed (and, for context, the ones that passed). */
    evidence: z.strictObject({
      failed: z.array(ClaimCheckSchema).min(1).max(1024),
      passed: z.array(ClaimCheckSchema).max(1024),
      profileKind: z.enum(['gpu', 'cpu', 'simulated']),
      measuredAt: UtcTimestampSchema,
      /** The reference table's version and source, so a reader can check the published figures. */
      referenceTable: text(128),
    }),
    reliabilityBefore: z.number().min(0).max(1),
    reliabilityAfter: z.number().min(0).max(1),
    at: UtcTimestampSchema,
  }),
});
