import { z } from 'zod';
import { RequestIdSchema } from './benchmarking.schemas';

/** Why an edge declined a benchmark or probe request. */
export const BenchmarkDeclineSchema = z.strictObject({
  code: z.enum(['BUSY', 'ALREADY_RUNNING', 'UNSUPPORTED', 'INVALID_REQUEST']),
  message: z.string().max(512),
});

/** The immediate answer to `RunBenchmarkOnEdge` and `ProbeLinksOnEdge`. */
export const BenchmarkReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({ requestId: RequestIdSchema, outcome: z.literal('accepted') }),
  z.strictObject({
    requestId: RequestIdSchema,
    outcome: z.literal('declined'),
    reason: BenchmarkDeclineSchema,
  }),
]);
export type BenchmarkReply = z.infer<typeof BenchmarkReplySchema>;
