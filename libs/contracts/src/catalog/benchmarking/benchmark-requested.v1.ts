import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { BenchmarkReasonSchema, RequestIdSchema } from './benchmarking.schemas';

export const BenchmarkRequested = defineEvent({
  type: 'benchmark.requested',
  version: 1,
  subject: 'benchmarking.benchmark.requested.v1',
  stream: BenchmarkingStream.name,
  description:
    'Benchmarking asked an edge to measure itself (first time, renewal, new hardware, spot check).',
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    requestId: RequestIdSchema,
    reason: BenchmarkReasonSchema,
    at: UtcTimestampSchema,
    /** Without a report by then, the request counts as failed. */
    deadline: UtcTimestampSchema,
  }),
});
