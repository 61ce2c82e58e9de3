import {
  type Envelope,
  type Host,
  type Inventory,
  type PayloadOf,
  ProviderDeregistered,
  ProviderInventoryChanged,
  ProviderOffline,
  ProviderOnline,
  ProviderRegistered,
  ProviderReservationsChanged,
} from '@gpunet/contracts';
import type { Tx } from '@gpunet/eventing';
import type { LinkMeasurement } from '../domain/links';
import type { HostCoordinate, LinkRow } from '../domain/network-estimate';
import type { ProviderBenchmarkEvent } from '../domain/provider-benchmark.decider';
import { RELIABILITY } from '../domain/reliability';
import type { Claim } from '../domain/verification';

/** Discovery's events benchmarking keeps a view of: the claims it verifies, addresses, liveness, busyness. */
export const discoveryMessages = [
  ProviderRegistered,
  ProviderInventoryChanged,
  ProviderReservationsChanged,
  ProviderOnline,
  ProviderOffline,
  ProviderDeregistered,
] as const;

export const claimOfInventory = (inventory: Inventory): Claim => ({
  simulated: inventory.simulated,
  gpus: inventory.gpus.map((g) => ({ index: g.index, uuid: g.uuid, model: g.model, vramBytes: g.vramBytes })),
});

/** IPv4 addresses a peer may probe (loopback ones are dropped by the probe cycle unless configured). */
const addressesOf = (host: Host) => host.addresses.filter((a) => a.family === 'ipv4').map((a) => a.address);

/** Applies one discovery event to the providers view (older reports, by sequence, are ignored). */
export const projectDiscoveryEvent = async (tx: Tx, envelope: Envelope): Promise<void> => {
  const s = tx.schema;
  switch (envelope.type) {
    case ProviderRegistered.type: {
      const d = envelope.data as PayloadOf<typeof ProviderRegistered>;
      await tx.execute(
        `INSERT INTO "${s}".providers (provider_id, simulated, claim, addresses, status, busy, inventory_changed_at, last_sequence)
         VALUES ($1, $2, $3::jsonb, $4::jsonb, 'online', false, $5, $6)
         ON CONFLICT (provider_id) DO UPDATE SET simulated = $2, claim = $3::jsonb, addresses = $4::jsonb, status = 'online',
           inventory_changed_at = CASE WHEN providers.claim = $3::jsonb THEN providers.inventory_changed_at ELSE $5 END,
           last_sequence = $6
         WHERE providers.last_sequence <= $6`,
        [
          d.providerId,
          d.inventory.simulated,
          JSON.stringify(claimOfInventory(d.inventory)),
          JSON.stringify(addressesOf(d.host)),
          d.at,
          d.sequence,
        ],
      );
      return;
    }
    case ProviderInventoryChanged.type: {
      const d = envelope.data as PayloadOf<typeof ProviderInventoryChanged>;
      await tx.execute(
        `UPDATE "${s}".providers SET simulated = $2, claim = $3::jsonb, addresses = $4::jsonb,
           inventory_changed_at = CASE WHEN claim = $3::jsonb THEN inventory_changed_at ELSE $5 END, last_sequence = $6
         WHERE provider_id = $1 AND last_sequence <= $6`,
        [
          d.providerId,
          d.inventory.simulated,
          JSON.stringify(claimOfInventory(d.inventory)),
          JSON.stringify(addressesOf(d.host)),
          d.at,
          d.sequence,
        ],
      );
      return;
    }
    case ProviderReservationsChanged.type: {
      const d = envelope.data as PayloadOf<typeof ProviderReservationsChanged>;
      await tx.execute(
        `UPDATE "${s}".providers SET busy = $2, last_sequence = $3 WHERE provider_id = $1 AND last_sequence <= $3`,
        [d.providerId, d.reservations.length > 0, d.sequence],
      );
      return;
    }
    case ProviderOnline.type:
    case ProviderOffline.type: {
      const d = envelope.data as PayloadOf<typeof ProviderOnline>;
      await tx.execute(
        `UPDATE "${s}".providers SET status = $2 WHERE provider_id = $1 AND status <> 'deregistered'`,
        [d.providerId, envelope.type === ProviderOnline.type ? 'online' : 'offline'],
      );
      return;
    }
    case ProviderDeregistered.type: {
      const d = envelope.data as PayloadOf<typeof ProviderDeregistered>;
      await tx.execute(`UPDATE "${s}".providers SET status = 'deregistered' WHERE provider_id = $1`, [
        d.providerId,
      ]);
      return;
    }
    default:
      return;
  }
};

export const loadClaim = async (tx: Tx, providerId: string): Promise<Claim | null> => {
  const [row] = await tx.query<{ claim: Claim }>(
    `SELECT claim FROM "${tx.schema}".providers WHERE provider_id = $1`,
    [providerId],
  );
  return row?.claim ?? null;
};

/** Applies a provider's benchmarking events to its state and profile rows, in the appending transaction. */
export const projectBenchmarkEvents = async (
  tx: Tx,
  events: readonly ProviderBenchmarkEvent[],
): Promise<void> => {
  const s = tx.schema;
  for (const event of events) {
    const id = event.data.providerId;
    await tx.execute(
      `INSERT INTO "${s}".benchmark_state (provider_id, reliability) VALUES ($1, $2) ON CONFLICT (provider_id) DO NOTHING`,
      [id, RELIABILITY.INITIAL],
    );
    switch (event.type) {
      case 'benchmark.requested':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET pending_request_id = $2, pending_deadline = $3, last_requested_at = $4
           WHERE provider_id = $1`,
          [id, event.data.requestId, event.data.deadline, event.data.at],
        );
        break;
      case 'benchmark.failed':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET pending_request_id = NULL, pending_deadline = NULL,
             failed_runs = failed_runs + $2 WHERE provider_id = $1`,
          [id, event.data.cause === 'declined' ? 0 : 1],
        );
        break;
      case 'gpu.benchmarked':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET pending_request_id = NULL, pending_deadline = NULL WHERE provider_id = $1`,
          [id],
        );
        await tx.execute(
          `INSERT INTO "${s}".gpu_profiles (provider_id, simulated, profile, measured_at, expires_at)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (provider_id) DO UPDATE SET simulated = $2, profile = $3, measured_at = $4, expires_at = $5`,
          [
            id,
            event.data.simulated,
            JSON.stringify(event.data.profile),
            event.data.profile.measuredAt,
            event.data.profile.expiresAt,
          ],
        );
        break;
      case 'provider.claim.verified':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET verified_runs = verified_runs + 1, last_verified_at = $2 WHERE provider_id = $1`,
          [id, event.data.at],
        );
        break;
      case 'provider.claim.mismatched':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET mismatches = mismatches + 1, last_mismatch_at = $2 WHERE provider_id = $1`,
          [id, event.data.at],
        );
        break;
      case 'provider.reliability-changed':
        await tx.execute(`UPDATE "${s}".benchmark_state SET reliability = $2 WHERE provider_id = $1`, [
          id,
          event.data.score,
        ]);
        break;
      default: {
        const unknown: never = event;
        throw new Error(`unprojected event ${JSON.stringify(unknown)}`);
      }
    }
  }
};

/** Upserts measured links (one row per direction; the newest measurement wins). */
export const upsertLinks = async (tx: Tx, links: readonly LinkMeasurement[]): Promise<void> => {
  for (const l of links)
    await tx.execute(
      `INSERT INTO "${tx.schema}".links (a, b, rtt_us, throughput_bps, same_site, path, measured_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (a, b) DO UPDATE SET rtt_us = $3,
         throughput_bps = COALESCE($4, CASE WHEN links.expires_at > $7 THEN links.throughput_bps END),
         same_site = $5, path = $6, measured_at = $7, expires_at = $8
       WHERE links.measured_at <= $7`,
      [l.a, l.b, l.rttUs, l.throughputBitsPerSecond, l.sameSite, l.path, l.measuredAt, l.expiresAt],
    );
};

export const liveLinks = (tx: Tx, atIso: string): Promise<LinkRow[]> =>
  tx
    .query<{ a: string; b: string; rtt_us: number }>(
      `SELECT a, b, rtt_us FROM "${tx.schema}".links WHERE expires_at > $1`,
      [atIso],
    )
    .then((rows) => rows.map((r) => ({ a: r.a, b: r.b, rttUs: r.rtt_us })));

export const loadCoordinates = async (
  tx: Tx,
): Promise<Map<string, { x: number; y: number; height: number }>> =>
  new Map(
    (
      await tx.query<{ host_id: string; x: number; y: number; height: number }>(
        `SELECT host_id, x, y, height FROM "${tx.schema}".coordinates`,
      )
    ).map((r) => [r.host_id, { x: r.x, y: r.y, height: r.height }]),
  );

export const writeCoordinates = async (
  tx: Tx,
  coords: readonly HostCoordinate[],
  atIso: string,
): Promise<void> => {
  for (const c of coords)
    await tx.execute(
      `INSERT INTO "${tx.schema}".coordinates (host_id, x, y, height, error, site_id, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (host_id) DO UPDATE SET x = $2, y = $3, height = $4, error = $5, site_id = $6, updated_at = $7`,
      [c.hostId, c.x, c.y, c.height, c.error, c.siteId, atIso],
    );
};
