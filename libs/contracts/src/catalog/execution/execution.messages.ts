import { RankLogChunk } from './edge-rank-log.v1';
import { RankStatusReported } from './edge-rank-status.v1';
import { StartRankOnEdge } from './edge-start-rank.v1';
import { StopRanksOnEdge } from './edge-stop-ranks.v1';
import { JobCancelRequested } from './job-cancel-requested.v1';
import { JobLaunching } from './job-launching.v1';
import { JobRestarting } from './job-restarting.v1';
import { JobRunning } from './job-running.v1';
import { RankExited } from './rank-exited.v1';

/** Every execution-side message, for registries. */
export const executionMessages = [
  StartRankOnEdge,
  StopRanksOnEdge,
  RankStatusReported,
  RankLogChunk,
  JobCancelRequested,
  JobLaunching,
  JobRunning,
  RankExited,
  JobRestarting,
] as const;
