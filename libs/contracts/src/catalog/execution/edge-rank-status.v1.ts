import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { EdgeRanksStream } from '../streams';

export const RankStateSchema = z.enum(['running', 'exited']);

/**
 * The first, unsigned version of a rank's status. Retired: usage is paid from statuses, so
 * execution reads only signed ones (v2); a v1 cannot be upcast (no signature can be made up for it)
 * and is dead-lettered as `UNSIGNED_REPORT`.
 */
export const RankStatusReportedV1 = defineEvent({
  type: 'edge.rank-status',
  version: 1,
  subject: 'edge.{edgeId}.rank-status.v1',
  stream: EdgeRanksStream.name,
  description:
    'A rank started, is still running, or exited (code or signal), as its edge saw it. Unsigned; retired for v2.',
  schema: z.strictObject({
    edgeId: EdgeIdSchema,
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    state: RankStateSchema,
    startedAt: UtcTimestampSchema,
    /** Set when `state` is exited. */
    exitedAt: UtcTimestampSchema.nullable(),
    exitCode: z.int().nullable(),
    signal: z.string().max(32).nullable(),
    /** Why the edge stopped it, when it did (`cancelled`, `max-duration`, `oom`, `edge-restart`…). */
    stopReason: z.string().max(128).nullable(),
    /** Wall seconds the rank has run (so far, or in all). */
    wallSeconds: z.number().min(0),
    reportedAt: UtcTimestampSchema,
  }),
});
