import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { BenchmarkProfileSchema } from './benchmark-profile.schemas';
import { BenchmarkReasonSchema, RequestIdSchema } from './benchmarking.schemas';

export const GpuBenchmarked = defineEvent({
  type: 'gpu.benchmarked',
  version: 1,
  subject: 'benchmarking.gpu.benchmarked.v1',
  stream: BenchmarkingStream.name,
  description:
    "A provider's devices were measured; the profile is the one the scheduler reads until it expires.",
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    requestId: RequestIdSchema,
    reason: BenchmarkReasonSchema,
    /** The inventory is declared, not detected; the profile is then `simulated` too. */
    simulated: z.boolean(),
    profile: BenchmarkProfileSchema,
    at: UtcTimestampSchema,
  }),
});
