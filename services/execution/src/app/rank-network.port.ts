import type { Causation, LaunchedRank, PlacedNode } from '@gpunet/contracts';

/** A node of a placed gang, as the network needs it. */
export type NetworkNode = Pick<PlacedNode, 'providerId' | 'hostId'>;

/** The network a job's ranks talk over, once prepared. */
export interface PreparedNetwork {
  /** The address other ranks reach this node at (rank 0's becomes MASTER_ADDR). */
  addressOf(node: NetworkNode): string;
  /** The interface ranks bind to (`gpunet0` on the overlay); null: the host's own network. */
  readonly interface: string | null;
  /**
   * The interface a node's ranks pin their collectives to (`GLOO_SOCKET_IFNAME`, …): the overlay's,
   * or on the host network the one carrying the address other ranks reach the node at — a rank must
   * not bind to whatever its hostname resolves to (a loopback alias, a bridge). Null: no pinning.
   */
  bindInterfaceOf(node: NetworkNode): string | null;
  /** Whether ranks must run in a network namespace the edge prepared (the overlay's). */
  readonly netnsRequired: boolean;
  /** A rank's own address on `interface` (overlay), or null on the host network. */
  overlayAddressOf(rank: LaunchedRank): string | null;
}

/** Injection token of the service's `RankNetwork`. */
export const RANK_NETWORK = Symbol('gpunet.execution.rank-network');

/**
 * Where ranks find each other. Two adapters in infra/: `HostRankNetwork` (host networking: each
 * edge's own address, as discovery reported it; development and CI) and `OverlayRankNetwork` (a
 * per-job network from libs/overlay, addresses on `gpunet0`). `prepare` is idempotent
 * — it runs again for every attempt and after a restart — and `teardown` once at the job's end.
 */
export interface RankNetwork {
  /** `job.cause`: the job's correlation and the event its launch follows from (the path report's). */
  prepare(
    job: { readonly jobId: string; readonly tenantId: string; readonly cause: Causation },
    nodes: readonly NetworkNode[],
  ): Promise<PreparedNetwork>;
  /**
   * Removes the job's network. `nodes`: the placement's nodes, so that a network this instance
   * forgot (a restart) is still torn down. A rejection makes the release retry on the next tick.
   */
  teardown(jobId: string, nodes: readonly NetworkNode[]): Promise<void>;
}
