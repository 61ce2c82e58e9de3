import type { EdgeReservation, Inventory, PolicySummary } from '@gpunet/contracts';
import type { Tx } from '@gpunet/eventing';
import { gpuRows } from '../domain/gpu-rows';
import { reportedIsolation } from '../domain/host-isolation';
import type { ProviderEvent } from '../domain/provider.decider';

interface ProviderRow {
  inventory: Inventory;
  policy: PolicySummary;
  reservations: EdgeReservation[];
  status: 'online' | 'offline' | 'deregistered';
}

const policyColumns = (p: PolicySummary) => [
  p.cpuMillicores,
  p.memoryBytes,
  p.maxGpusPerJob,
  p.maxJobDurationMs,
  p.images,
  p.subnets,
  p.pricing.asset,
  p.location.continent,
  p.location.country,
  p.location.city,
  p.availability === null ? null : JSON.stringify(p.availability),
];

/**
 * Applies provider events to the inventory projection inside the transaction that appended them,
 * so the projection never lags the aggregate. `streamVersion` is the aggregate version after each.
 */
export const projectProviderEvents = async (
  tx: Tx,
  events: readonly { readonly event: ProviderEvent; readonly streamVersion: number }[],
): Promise<void> => {
  const s = tx.schema;
  const dirty = new Set<string>();
  for (const { event, streamVersion } of events) {
    const id = event.data.providerId;
    switch (event.type) {
      case 'provider.registered': {
        const d = event.data;
        const isolation = reportedIsolation(d.host);
        await tx.query(
          `INSERT INTO "${s}".providers (provider_id, public_key, name, agent_version, status, simulated, registered_at,
             status_changed_at, last_seen_at, cpu_architecture, cpu_millicores, memory_bytes, max_gpus_per_job, max_job_ms,
             images, subnets, asset, continent, country, city, availability, host, inventory, policy, reservations, stream_version,
             isolation, isolation_detail)
           VALUES ($1, $2, $3, $4, 'offline', $5, $6, $6, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, '[]', $22,
             $23, $24)
           ON CONFLICT (provider_id) DO UPDATE SET public_key = EXCLUDED.public_key, name = EXCLUDED.name,
             agent_version = EXCLUDED.agent_version, status = 'offline', simulated = EXCLUDED.simulated,
             registered_at = EXCLUDED.registered_at, status_changed_at = EXCLUDED.status_changed_at,
             last_seen_at = EXCLUDED.last_seen_at, cpu_architecture = EXCLUDED.cpu_architecture,
             cpu_millicores = EXCLUDED.cpu_millicores, memory_bytes = EXCLUDED.memory_bytes,
             max_gpus_per_job = EXCLUDED.max_gpus_per_job, max_job_ms = EXCLUDED.max_job_ms, images = EXCLUDED.images,
             subnets = EXCLUDED.subnets, asset = EXCLUDED.asset, continent = EXCLUDED.continent, country = EXCLUDED.country,
             city = EXCLUDED.city, availability = EXCLUDED.availability, host = EXCLUDED.host, inventory = EXCLUDED.inventory,
             policy = EXCLUDED.policy, reservations = '[]', stream_version = EXCLUDED.stream_version,
             isolation = EXCLUDED.isolation, isolation_detail = EXCLUDED.isolation_detail`,
          [
            id,
            d.publicKey,
            d.name,
            d.agentVersion,
            d.inventory.simulated,
            d.at,
            d.host.cpu.architecture,
            ...policyColumns(d.policy),
            JSON.stringify(d.host),
            JSON.stringify(d.inventory),
            JSON.stringify(d.policy),
            streamVersion,
            isolation.level,
            isolation.detail,
          ],
        );
        dirty.add(id);
        break;
      }
      case 'provider.inventory-changed': {
        const isolation = reportedIsolation(event.data.host);
        await tx.query(
          `UPDATE "${s}".providers SET host = $2, inventory = $3, simulated = $4, cpu_architecture = $5, stream_version = $6,
             isolation = $7, isolation_detail = $8
           WHERE provider_id = $1`,
          [
            id,
            JSON.stringify(event.data.host),
            JSON.stringify(event.data.inventory),
            event.data.inventory.simulated,
            event.data.host.cpu.architecture,
            streamVersion,
            isolation.level,
            isolation.detail,
          ],
        );
        dirty.add(id);
        break;
      }
      case 'provider.policy-changed':
        await tx.query(
          `UPDATE "${s}".providers SET cpu_millicores = $2, memory_bytes = $3, max_gpus_per_job = $4, max_job_ms = $5,
             images = $6, subnets = $7, asset = $8, continent = $9, country = $10, city = $11, availability = $12,
             policy = $13, stream_version = $14
           WHERE provider_id = $1`,
          [id, ...policyColumns(event.data.policy), JSON.stringify(event.data.policy), streamVersion],
        );
        dirty.add(id);
        break;
      case 'provider.reservations-changed':
        await tx.query(
          `UPDATE "${s}".providers SET reservations = $2, stream_version = $3 WHERE provider_id = $1`,
          [id, JSON.stringify(event.data.reservations), streamVersion],
        );
        dirty.add(id);
        break;
      case 'provider.online':
      case 'provider.offline':
      case 'provider.deregistered': {
        const status =
          event.type === 'provider.online'
            ? 'online'
            : event.type === 'provider.offline'
              ? 'offline'
              : 'deregistered';
        await tx.query(
          `UPDATE "${s}".providers SET status = $2, status_changed_at = $3, stream_version = $4,
             last_seen_at = CASE WHEN $2 = 'online' THEN greatest(last_seen_at, $3::timestamptz) ELSE last_seen_at END
           WHERE provider_id = $1`,
          [id, status, event.data.at, streamVersion],
        );
        if (!dirty.has(id))
          await tx.query(
            `UPDATE "${s}".gpus SET available = ($2 AND shared AND NOT mig AND reserved_by IS NULL) WHERE provider_id = $1`,
            [id, status === 'online'],
          );
        break;
      }
      default: {
        const never: never = event;
        return never;
      }
    }
  }
  for (const id of dirty) await rebuildGpus(tx, id);
};

/** Rewrites one provider's GPU rows from what it reported. */
const rebuildGpus = async (tx: Tx, providerId: string): Promise<void> => {
  const s = tx.schema;
  const [row] = await tx.query<ProviderRow>(
    `SELECT inventory, policy, reservations, status FROM "${s}".providers WHERE provider_id = $1`,
    [providerId],
  );
  if (!row) return;
  const rows = gpuRows(row.inventory, row.policy, row.reservations, row.status === 'online');
  await tx.query(`DELETE FROM "${s}".gpus WHERE provider_id = $1`, [providerId]);
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO "${s}".gpus (provider_id, uuid, idx, vendor, model, model_words, vram_bytes, compute_cap, cuda_version,
       rocm_version, architecture, pci_bus_id, mig, shared, reserved_by, price_floor, direct_peers, available)
     SELECT $1, t.uuid, t.idx, t.vendor, t.model, t.model_words, t.vram_bytes, t.compute_cap, t.cuda_version,
       t.rocm_version, t.architecture, t.pci_bus_id, t.mig, t.shared, t.reserved_by, t.price_floor, t.peers::int[], t.available
     FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::int[], $9::text[],
       $10::text[], $11::text[], $12::text[], $13::boolean[], $14::boolean[], $15::text[], $16::numeric[], $17::text[], $18::boolean[])
       AS t(uuid, idx, vendor, model, model_words, vram_bytes, compute_cap, cuda_version, rocm_version, architecture,
            pci_bus_id, mig, shared, reserved_by, price_floor, peers, available)`,
    [
      providerId,
      rows.map((r) => r.uuid),
      rows.map((r) => r.index),
      rows.map((r) => r.vendor),
      rows.map((r) => r.model),
      rows.map((r) => r.modelWords),
      rows.map((r) => r.vramBytes),
      rows.map((r) => r.computeCapability),
      rows.map((r) => r.cudaVersion),
      rows.map((r) => r.rocmVersion),
      rows.map((r) => r.architecture),
      rows.map((r) => r.pciBusId),
      rows.map((r) => r.mig),
      rows.map((r) => r.shared),
      rows.map((r) => r.reservedBy),
      rows.map((r) => r.priceFloorMinor),
      // int[] per row: unnest cannot take a ragged 2-D array, so each travels as '{1,2}' text.
      rows.map((r) => `{${r.directPeers.join(',')}}`),
      rows.map((r) => r.available),
    ],
  );
};

/** Records heartbeats: the newest time each provider was heard from (discovery's clock). */
export const recordLastSeen = async (
  db: { query: Tx['query']; schema: string },
  seen: ReadonlyMap<string, number>,
): Promise<void> => {
  if (seen.size === 0) return;
  const ids = [...seen.keys()];
  await db.query(
    `UPDATE "${db.schema}".providers p SET last_seen_at = v.t
     FROM unnest($1::text[], $2::timestamptz[]) AS v(id, t)
     WHERE p.provider_id = v.id AND (p.last_seen_at IS NULL OR p.last_seen_at < v.t)`,
    [ids, ids.map((id) => new Date(seen.get(id)!).toISOString())],
  );
};

/** A signed report is also a sign of life: the provider was heard now (unless it deregistered). */
export const touchLastSeen = async (tx: Tx, providerId: string, at: string): Promise<void> => {
  await tx.query(
    `UPDATE "${tx.schema}".providers SET last_seen_at = greatest(last_seen_at, $2::timestamptz)
     WHERE provider_id = $1 AND status <> 'deregistered'`,
    [providerId, at],
  );
};
