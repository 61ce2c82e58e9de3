import {
  type Host,
  type Inventory,
  type PayloadOf,
  type ProviderInventoryChanged,
  type ProviderRegistered,
  type ProviderReservationsChanged,
} from '@gpunet/contracts';
import type { Tx } from '@gpunet/eventing';
import type { Claim } from '../domain/verification';
import type { Sql } from './sql';

/*
 * Benchmarking's view of providers, from discovery's events: the claims it verifies, the addresses
 * peers probe, liveness and busyness. Discovery numbers each provider's reports (`sequence`); an
 * older one than the view holds is ignored.
 */

const claimOfInventory = (inventory: Inventory): Claim => ({
  simulated: inventory.simulated,
  gpus: inventory.gpus.map((g) => ({ index: g.index, uuid: g.uuid, model: g.model, vramBytes: g.vramBytes })),
});

/** IPv4 addresses a peer may probe (loopback ones are dropped by the probe cycle unless configured). */
const addressesOf = (host: Host) => host.addresses.filter((a) => a.family === 'ipv4').map((a) => a.address);

/** What a registration and an inventory change both report: the claim, addresses and time. */
const inventoryParams = (
  d: PayloadOf<typeof ProviderRegistered> | PayloadOf<typeof ProviderInventoryChanged>,
): unknown[] => [
  d.providerId,
  d.inventory.simulated,
  JSON.stringify(claimOfInventory(d.inventory)),
  JSON.stringify(addressesOf(d.host)),
  d.at,
  d.sequence,
];

export const applyProviderRegistered = async (
  tx: Tx,
  d: PayloadOf<typeof ProviderRegistered>,
): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".providers (provider_id, simulated, claim, addresses, status, busy, inventory_changed_at, last_sequence)
     VALUES ($1, $2, $3::jsonb, $4::jsonb, 'online', false, $5, $6)
     ON CONFLICT (provider_id) DO UPDATE SET simulated = $2, claim = $3::jsonb, addresses = $4::jsonb, status = 'online',
       inventory_changed_at = CASE WHEN providers.claim = $3::jsonb THEN providers.inventory_changed_at ELSE $5 END,
       last_sequence = $6
     WHERE providers.last_sequence <= $6`,
    inventoryParams(d),
  );
};

export const applyInventoryChanged = async (
  tx: Tx,
  d: PayloadOf<typeof ProviderInventoryChanged>,
): Promise<void> => {
  await tx.execute(
    `UPDATE "${tx.schema}".providers SET simulated = $2, claim = $3::jsonb, addresses = $4::jsonb,
       inventory_changed_at = CASE WHEN claim = $3::jsonb THEN inventory_changed_at ELSE $5 END, last_sequence = $6
     WHERE provider_id = $1 AND last_sequence <= $6`,
    inventoryParams(d),
  );
};

/** A provider is busy while any reservation holds its GPUs. */
export const applyReservationsChanged = async (
  tx: Tx,
  d: PayloadOf<typeof ProviderReservationsChanged>,
): Promise<void> => {
  await tx.execute(
    `UPDATE "${tx.schema}".providers SET busy = $2, last_sequence = $3 WHERE provider_id = $1 AND last_sequence <= $3`,
    [d.providerId, d.reservations.length > 0, d.sequence],
  );
};

/** Liveness; a deregistered provider stays deregistered. */
export const applyProviderLiveness = async (
  tx: Tx,
  providerId: string,
  status: 'online' | 'offline',
): Promise<void> => {
  await tx.execute(
    `UPDATE "${tx.schema}".providers SET status = $2 WHERE provider_id = $1 AND status <> 'deregistered'`,
    [providerId, status],
  );
};

export const applyProviderDeregistered = async (tx: Tx, providerId: string): Promise<void> => {
  await tx.execute(`UPDATE "${tx.schema}".providers SET status = 'deregistered' WHERE provider_id = $1`, [
    providerId,
  ]);
};

/** The provider's claim as discovery last reported it; null: a provider discovery never announced. */
export const loadClaim = async (sql: Sql, providerId: string): Promise<Claim | null> => {
  const [row] = await sql.query<{ claim: Claim }>(
    `SELECT claim FROM "${sql.schema}".providers WHERE provider_id = $1`,
    [providerId],
  );
  return row?.claim ?? null;
};

/** The providers not deregistered: the hosts the coordinates are fitted for. */
export const activeProviderIds = async (sql: Sql): Promise<string[]> =>
  (
    await sql.query<{ provider_id: string }>(
      `SELECT provider_id FROM "${sql.schema}".providers WHERE status <> 'deregistered'`,
    )
  ).map((r) => r.provider_id);

/** The online providers in id order, with their addresses and whether a job holds their GPUs. */
export const onlineProviders = async (
  sql: Sql,
): Promise<{ providerId: string; addresses: string[]; busy: boolean }[]> =>
  (
    await sql.query<{ provider_id: string; addresses: string[]; busy: boolean }>(
      `SELECT provider_id, addresses, busy FROM "${sql.schema}".providers WHERE status = 'online' ORDER BY provider_id`,
    )
  ).map((r) => ({ providerId: r.provider_id, addresses: r.addresses, busy: r.busy }));
