import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { EdgeRanksStream } from '../streams';

export const RankStateSchema = z.enum(['running', 'exited']);

/**
 * A rank's lifecycle on its edge: `running` when it started (and every heartbeat period while it
 * runs), `exited` once with its exit code or signal. Not signed: NATS permissions let only this
 * edge publish on its subject, and execution accepts a status only from the edge the rank was
 * placed on.
 */
export const RankStatusReported = defineEvent({
  type: 'edge.rank-status',
  version: 1,
  subject: 'edge.{edgeId}.rank-status.v1',
  stream: EdgeRanksStream.name,
  description: 'A rank started, is still running, or exited (code or signal), as its edge saw it.',
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
