import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';
import { ChallengeEvidenceSchema, ChallengeReasonSchema } from './challenge.schemas';

export const ProviderChallenged = defineEvent({
  type: 'provider.challenged',
  version: 1,
  subject: 'benchmarking.provider.challenged.v1',
  stream: BenchmarkingStream.name,
  description: 'A GPU challenge ended: passed, or failed with the evidence (a wrong or late answer).',
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    challengeId: RequestIdSchema,
    reason: ChallengeReasonSchema,
    /** The job the GPU was running, for a spot check during a job. */
    jobId: EntityIdSchema.nullable(),
    gpuUuid: z.string().min(1).max(128),
    outcome: z.enum(['passed', 'failed']),
    evidence: ChallengeEvidenceSchema,
    at: UtcTimestampSchema,
  }),
});
