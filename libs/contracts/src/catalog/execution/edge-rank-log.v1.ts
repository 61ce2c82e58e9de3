import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { JobLogsStream } from '../streams';

/** A chunk of a rank's output. Best effort: dropped (and counted) rather than block the rank. */
export const RankLogChunk = defineEvent({
  type: 'edge.rank-log',
  version: 1,
  subject: 'edge.{edgeId}.log.{jobId}.v1',
  stream: JobLogsStream.name,
  description: 'Lines a rank wrote to stdout or stderr; `dropped` counts lines lost to back-pressure.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    stream: z.enum(['stdout', 'stderr']),
    /** Per (job, attempt, rank, stream), from 1. */
    seq: z.int().min(1),
    lines: z.array(z.string().max(16 * 1024)).max(1024),
    dropped: z.int().min(0),
    at: UtcTimestampSchema,
  }),
});
