import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';
import { GpuVerificationStatusSchema } from './challenge.schemas';

export const GpuVerificationChanged = defineEvent({
  type: 'gpu.verification-changed',
  version: 1,
  subject: 'benchmarking.gpu.verification-changed.v1',
  stream: BenchmarkingStream.name,
  description:
    "A provider's GPUs changed verification status (first seen, a challenge passed or failed); the scheduler places only verified GPUs where the subnet requires it.",
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    /** Every GPU of the provider with its status now (not only those that changed). */
    gpus: z
      .array(z.strictObject({ uuid: z.string().min(1).max(128), status: GpuVerificationStatusSchema }))
      .max(64),
    cause: z.enum(['registered', 'challenge-passed', 'challenge-failed', 'inventory-changed']),
    /** The challenge that caused the change (its `provider.challenged` carries the evidence). */
    challengeId: RequestIdSchema.nullable(),
    at: UtcTimestampSchema,
  }),
});
