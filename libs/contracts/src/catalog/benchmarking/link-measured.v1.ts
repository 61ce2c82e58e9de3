import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';

export const LinkMeasured = defineEvent({
  type: 'link.measured',
  version: 1,
  subject: 'benchmarking.link.measured.v1',
  stream: BenchmarkingStream.name,
  description: 'The RTT (and throughput) from one provider host to another was measured.',
  schema: z.strictObject({
    /** The prober. */
    a: EdgeIdSchema,
    /** The peer it probed. */
    b: EdgeIdSchema,
    /** Minimum RTT over the samples (queueing removed), µs. */
    rttUs: z.number().min(0),
    /** a → b bulk throughput; null when not measured this time. */
    throughputBitsPerSecond: z.number().min(0).nullable(),
    /** Both hosts are on one LAN (same site). */
    sameSite: z.boolean(),
    path: z.enum(['direct', 'overlay']),
    /**
     * The pair reached each other only through a job's relay (`path` is `overlay`): the figures are
     * the relayed path's, what a job on that pair gets, not the hosts' own network (benchmarking
     * leaves them out of its coordinate fit). Absent: direct.
     */
    relayed: z.boolean().optional(),
    measuredAt: UtcTimestampSchema,
    expiresAt: UtcTimestampSchema,
  }),
});
