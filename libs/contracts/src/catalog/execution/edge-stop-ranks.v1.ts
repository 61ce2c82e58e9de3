import { z } from 'zod';
import { defineCommand } from '../../message';
import { EntityIdSchema } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';

/** Stop a job's ranks on this edge (all attempts up to `attempt`, or all). Idempotent. */
export const StopRanksOnEdge = defineCommand({
  type: 'edge.stop-ranks',
  version: 1,
  subject: 'cmd.edge.{edgeId}.stop-ranks.v1',
  stream: CORE_REQUEST_REPLY,
  description: "Stop a job's ranks on this edge: SIGTERM, then SIGKILL after the grace period.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** Stop ranks of this attempt and older; null: every attempt. */
    attempt: z.int().min(1).nullable(),
    reason: z.enum(['cancelled', 'max-duration', 'gang-failed', 'restart', 'start-barrier', 'shutdown']),
    graceMs: z.int().min(0).max(300_000),
  }),
});

export const StopRanksReplySchema = z.strictObject({
  jobId: z.string().max(256),
  /** Ranks that were running and were signalled. */
  stopping: z.int().min(0),
});
export type StopRanksReply = z.infer<typeof StopRanksReplySchema>;
