import { z } from 'zod';
import { defineEvent } from '../../message';
import { signedEdgeReportFields } from '../primitives';
import { EdgeBenchmarkStream } from '../streams';
import { BenchmarkProfileSchema } from './benchmark-profile.schemas';
import { RequestIdSchema } from './benchmarking.schemas';

export const EdgeBenchmarkReported = defineEvent({
  type: 'edge.benchmark-reported',
  version: 1,
  subject: 'edge.{edgeId}.benchmark-reported.v1',
  stream: EdgeBenchmarkStream.name,
  description: 'An edge finished (or failed) a benchmark run it accepted. Signed.',
  schema: z.strictObject({
    ...signedEdgeReportFields,
    requestId: RequestIdSchema,
    outcome: z.enum(['completed', 'failed']),
    /** Present when completed. */
    profile: BenchmarkProfileSchema.nullable(),
    /** Why it failed (the runner's last words); null when completed. */
    error: z.string().max(2048).nullable(),
  }),
});
