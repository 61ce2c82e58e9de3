import type { Tx } from '@gpunet/eventing';
import type { LinkMeasurement } from '../domain/links';
import type { HostCoordinate, LinkRow } from '../domain/network-estimate';
import type { Sql } from './sql';

/* The measured links (one row per direction) and the coordinates fitted from them. */

/** Upserts measured links (the newest measurement wins). */
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

/** The links not expired at `atIso`. */
export const liveLinks = (sql: Sql, atIso: string): Promise<LinkRow[]> =>
  sql
    .query<{ a: string; b: string; rtt_us: number }>(
      `SELECT a, b, rtt_us FROM "${sql.schema}".links WHERE expires_at > $1`,
      [atIso],
    )
    .then((rows) => rows.map((r) => ({ a: r.a, b: r.b, rttUs: r.rtt_us })));

/** When each direction of every link was last measured (expired ones too), ms since the epoch. */
export const linkMeasuredTimes = async (
  sql: Sql,
): Promise<{ a: string; b: string; measuredAtMs: number }[]> =>
  (
    await sql.query<{ a: string; b: string; measured_at: Date }>(
      `SELECT a, b, measured_at FROM "${sql.schema}".links`,
    )
  ).map((r) => ({ a: r.a, b: r.b, measuredAtMs: r.measured_at.getTime() }));

/**
 * Serialises coordinate fits until `tx` ends: concurrent fits would each start from stale
 * coordinates.
 */
export const lockCoordinates = async (tx: Tx): Promise<void> => {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${tx.schema}.coordinates`]);
};

/** The last fit's coordinates (with their error and same-site group), by host. */
export const loadCoordinates = async (sql: Sql): Promise<Map<string, Omit<HostCoordinate, 'hostId'>>> =>
  new Map(
    (
      await sql.query<{
        host_id: string;
        x: number;
        y: number;
        height: number;
        error: number;
        site_id: string;
      }>(`SELECT host_id, x, y, height, error, site_id FROM "${sql.schema}".coordinates`)
    ).map((r) => [r.host_id, { x: r.x, y: r.y, height: r.height, error: r.error, siteId: r.site_id }]),
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
