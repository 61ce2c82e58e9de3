import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';

export const BenchmarkFailed = defineEvent({
  type: 'benchmark.failed',
  version: 1,
  subject: 'benchmarking.benchmark.failed.v1',
  stream: BenchmarkingStream.name,
  description:
    'A requested benchmark did not produce a profile: declined, failed on the edge, or no report in time.',
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    requestId: RequestIdSchema,
    cause: z.enum(['declined', 'failed', 'timed-out']),
    detail: z.string().max(2048),
    at: UtcTimestampSchema,
  }),
});
