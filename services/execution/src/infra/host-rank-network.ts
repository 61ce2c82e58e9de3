import type { ProviderDirectory } from '../app/provider-directory.port';
import type { NetworkNode, PreparedNetwork, RankNetwork } from '../app/rank-network.port';

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
