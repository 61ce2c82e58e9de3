import type { Host, Inventory } from '@gpunet/contracts';
import type { Database, Tx } from '@gpunet/eventing';
import type { ProviderDirectory } from '../app/provider-directory.port';

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** The first IPv4 address of a host that other hosts could reach (not loopback, not link-local). */
export const firstRoutableIpv4 = (host: Pick<Host, 'addresses'>): string | null =>
  firstRoutable(host)?.address ?? null;

/** The first non-loopback, non-link-local IPv4 address and the interface it is on. */
const firstRoutable = (host: Pick<Host, 'addresses'>): { address: string; interface: string } | null =>
  host.addresses.find(
    (a) =>
      a.family === 'ipv4' &&
      IPV4.test(a.address) &&
      !a.address.startsWith('127.') &&
      !a.address.startsWith('169.254.'),
  ) ?? null;

/** Records a provider's address and GPU models from discovery, ignoring reports older than the last. */
export const recordProvider = async (
  tx: Tx,
  provider: { providerId: string; sequence: number; host: Host; inventory: Inventory },
): Promise<void> => {
  const models = Object.fromEntries(provider.inventory.gpus.map((g) => [g.uuid, g.model]));
  await tx.execute(
    `INSERT INTO "${tx.schema}".providers (provider_id, sequence, address, interface, gpu_models)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (provider_id) DO UPDATE SET sequence = excluded.sequence, address = excluded.address,
       interface = excluded.interface, gpu_models = excluded.gpu_models
     WHERE providers.sequence < excluded.sequence`,
    [
      provider.providerId,
      provider.sequence,
      firstRoutable(provider.host)?.address ?? null,
      firstRoutable(provider.host)?.interface ?? null,
      JSON.stringify(models),
    ],
  );
};

export class PostgresProviderDirectory implements ProviderDirectory {
  constructor(private readonly db: Database) {}

  async addressOf(providerId: string): Promise<string | null> {
    const rows = await this.db.query<{ address: string | null }>(
      `SELECT address FROM "${this.db.schema}".providers WHERE provider_id = $1`,
      [providerId],
    );
    return rows[0]?.address ?? null;
  }

  async interfaceOf(providerId: string): Promise<string | null> {
    const rows = await this.db.query<{ interface: string | null }>(
      `SELECT interface FROM "${this.db.schema}".providers WHERE provider_id = $1`,
      [providerId],
    );
    return rows[0]?.interface ?? null;
  }

  async gpuModels(providerIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const rows = await this.db.query<{ gpu_models: Record<string, string> }>(
      `SELECT gpu_models FROM "${this.db.schema}".providers WHERE provider_id = ANY($1)`,
      [[...providerIds]],
    );
    return new Map(rows.flatMap((r) => Object.entries(r.gpu_models)));
  }
}
