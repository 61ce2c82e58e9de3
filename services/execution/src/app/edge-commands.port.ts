import type { PayloadOf, RankStartReply, StopRanksOnEdge, StopRanksReply } from '@gpunet/contracts';
import type { StartRankCommand } from '../domain/launch-spec';

export type StopRanksRequest = PayloadOf<typeof StopRanksOnEdge>;

/** What execution asks of the edges. Every call is idempotent on the edge, so a retry is harmless. */
export interface EdgeCommands {
  startRank(edgeId: string, command: StartRankCommand): Promise<RankStartReply>;
  stopRanks(edgeId: string, request: StopRanksRequest): Promise<StopRanksReply>;
  release(edgeId: string, reservationId: string, reason: string): Promise<void>;
}
