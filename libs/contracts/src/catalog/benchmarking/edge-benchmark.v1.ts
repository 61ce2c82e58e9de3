import { z } from 'zod';
import { defineCommand } from '../../message';
import { CORE_REQUEST_REPLY } from '../streams';
import { BENCHMARK_SUITES, BenchmarkReasonSchema, RequestIdSchema } from './benchmarking.schemas';

export const RunBenchmarkOnEdge = defineCommand({
  type: 'edge.benchmark',
  version: 1,
  subject: 'cmd.edge.{edgeId}.benchmark.v1',
  stream: CORE_REQUEST_REPLY,
  description:
    'Measure the GPUs (or the CPU) now; answered accepted/declined at once, the profile follows as edge.benchmark-reported.',
  schema: z.strictObject({
    requestId: RequestIdSchema,
    reason: BenchmarkReasonSchema,
    suites: z.array(z.enum(BENCHMARK_SUITES)).min(1).max(BENCHMARK_SUITES.length),
    /** The run must end within this (the runner shrinks its problem sizes to fit). */
    maxDurationMs: z.int().min(1_000).max(3_600_000),
    /** How long the profile stays valid after `measuredAt`. */
    ttlMs: z.int().min(60_000),
    /** Run even while a job holds the GPUs (the provider's policy must also allow it). */
    allowWhileBusy: z.boolean(),
  }),
});
