import type { LaunchedRank, PlacedNode } from '@gpunet/contracts';

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

/**
 * Where ranks find each other. `HostRankNetwork` (host networking: each edge's own address, as
 * discovery reported it) is the development and CI implementation; the overlay (libs/overlay: a
 * per-job network with addresses on `gpunet0`) plugs in as a second one. `prepare` is idempotent
 * — it runs again for every attempt and after a restart — and `teardown` once at the job's end.
 */
export interface RankNetwork {
  prepare(
    job: { readonly jobId: string; readonly tenantId: string },
    nodes: readonly NetworkNode[],
  ): Promise<PreparedNetwork>;
  /**
   * Removes the job's network. `nodes`: the placement's nodes, so that a network this instance
   * forgot (a restart) is still torn down. A rejection makes the release retry on the next tick.
   */
  teardown(jobId: string, nodes: readonly NetworkNode[]): Promise<void>;
}

/** What execution keeps of discovery's provider events. */
export interface ProviderDirectory {
  /** The provider's first non-loopback IPv4 address, if discovery reported one. */
  addressOf(providerId: string): Promise<string | null>;
  /** The interface that address is on, if discovery reported one. */
  interfaceOf(providerId: string): Promise<string | null>;
  /** GPU uuid → model, for the providers asked about. */
  gpuModels(providerIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

/**
 * Host networking: a node is reached at its provider's own address (discovery's
 * `host.addresses`), or at its host id where discovery has not told us one yet (a single-host
 * development cluster); its ranks pin their collectives to that address's interface. No namespace.
 */
export class HostRankNetwork implements RankNetwork {
  constructor(private readonly directory: ProviderDirectory) {}

  async prepare(
    _job: { jobId: string; tenantId: string },
    nodes: readonly NetworkNode[],
  ): Promise<PreparedNetwork> {
    const addresses = new Map<string, string>();
    const interfaces = new Map<string, string | null>();
    for (const node of nodes) {
      if (addresses.has(node.providerId)) continue;
      const address = await this.directory.addressOf(node.providerId);
      addresses.set(node.providerId, address ?? node.hostId.slice(0, 64));
      // Pinned only with the address it belongs to; a host id fallback pins nothing.
      interfaces.set(
        node.providerId,
        address === null ? null : await this.directory.interfaceOf(node.providerId),
      );
    }
    return {
      addressOf: (node) => addresses.get(node.providerId) ?? node.hostId.slice(0, 64),
      interface: null,
      bindInterfaceOf: (node) => interfaces.get(node.providerId) ?? null,
      netnsRequired: false,
      overlayAddressOf: () => null,
    };
  }

  teardown(): Promise<void> {
    return Promise.resolve();
  }
}
