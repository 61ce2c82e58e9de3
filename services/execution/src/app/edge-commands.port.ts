import type {
  Causation,
  PayloadOf,
  RankStartReply,
  ReleaseOnEdge,
  StopRanksOnEdge,
  StopRanksReply,
} from '@gpunet/contracts';
import type { StartRankCommand } from '../domain/launch-spec';

export type StopRanksRequest = PayloadOf<typeof StopRanksOnEdge>;

/** A reservation to release, and the job it was held for. */
export type ReleaseRequest = PayloadOf<typeof ReleaseOnEdge> & { readonly jobId: string };

/** Injection token of the `EdgeCommands` the process manager sends. */
export const EDGE_COMMANDS = Symbol('gpunet.execution.edge-commands');

/**
 * What execution asks of the edges. Every call is idempotent on the edge, so a retry is harmless.
 * `cause`: the job's correlation and the event the command follows from.
 */
export interface EdgeCommands {
  startRank(edgeId: string, command: StartRankCommand, cause: Causation): Promise<RankStartReply>;
  stopRanks(edgeId: string, request: StopRanksRequest, cause: Causation): Promise<StopRanksReply>;
  release(edgeId: string, request: ReleaseRequest, cause: Causation): Promise<void>;
}
