/*
 * Execution: the job process manager starts the ranks of a placed gang on its edges, watches them
 * to the end and meters them (ADR 0040).
 *
 *   execution ──cmd.edge.{edgeId}.start-rank.v1──▶ edge   (core request/reply: started | rejected)
 *   execution ──cmd.edge.{edgeId}.stop-ranks.v1──▶ edge   (core request/reply, idempotent)
 *   edge ──edge.{edgeId}.rank-status.v2──▶ EDGE_RANKS     (JetStream, signed; execution consumes durably)
 *   edge ──edge.{edgeId}.log.{jobId}.v1──▶ JOB_LOGS       (core publish, bounded: never blocks a rank)
 *
 * Every rank start carries the job's `attempt` (1, then one more per gang restart): a status of an
 * older attempt is recognised and ignored, and a start the edge has already seen for the same
 * (job, attempt, rank) is answered `started` again without starting a second process — so a
 * restarted execution service may re-send every start it is unsure about.
 */

// Control plane → edge (request/reply)
export {
  type RankRejection,
  RankRejectionSchema,
  type RankStartReply,
  RankStartReplySchema,
  StartRankOnEdge,
} from './edge-start-rank.v1';
export { StopRanksOnEdge, type StopRanksReply, StopRanksReplySchema } from './edge-stop-ranks.v1';
export {
  EnvNameSchema,
  MAX_RANK_ENV_BYTES,
  MAX_RANK_ENV_ENTRIES,
  type RankLimits,
  RankLimitsSchema,
  RankRuntimeSchema,
  type RankRuntimeKind,
  RelativePathSchema,
} from './rank.schemas';

// Edge → control plane
export { RankLogChunk } from './edge-rank-log.v1';
export { RankStateSchema, RankStatusReportedV1 } from './edge-rank-status.v1';
export { RankStatusReported, rankStatusV1ToV2 } from './edge-rank-status.v2';

// Gateway → execution
export { JobCancelRequested } from './job-cancel-requested.v1';

// Execution's job aggregate
export { JobLaunching, type LaunchedRank, LaunchedRankSchema } from './job-launching.v1';
export { JobRestarting } from './job-restarting.v1';
export { JobRunning } from './job-running.v1';
export { RankExited } from './rank-exited.v1';
export { UsageDisputed } from './usage-disputed.v1';

export { executionMessages, executionUpcasters } from './execution.messages';
