import { RankLogChunk } from './edge-rank-log.v1';
import { RankStatusReportedV1 } from './edge-rank-status.v1';
import { RankStatusReported, rankStatusV1ToV2 } from './edge-rank-status.v2';
import { StartRankOnEdge } from './edge-start-rank.v1';
import { StopRanksOnEdge } from './edge-stop-ranks.v1';
import { JobCancelRequested } from './job-cancel-requested.v1';
import { JobLaunching } from './job-launching.v1';
import { JobRestarting } from './job-restarting.v1';
import { JobRunning } from './job-running.v1';
import { RankExited } from './rank-exited.v1';
import { UsageDisputed } from './usage-disputed.v1';

/** Upcasters of the execution-side messages (a v1 rank status is refused: it is unsigned). */
export const executionUpcasters = [rankStatusV1ToV2] as const;

/** Every execution-side message, for registries (pass `executionUpcasters` too). */
export const executionMessages = [
  StartRankOnEdge,
  StopRanksOnEdge,
  RankStatusReportedV1,
  RankStatusReported,
  RankLogChunk,
  JobCancelRequested,
  JobLaunching,
  JobRunning,
  RankExited,
  JobRestarting,
  UsageDisputed,
] as const;
