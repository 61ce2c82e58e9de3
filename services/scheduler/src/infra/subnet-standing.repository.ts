import type { Database, Tx } from '@gpunet/eventing';
import type { StandingRow } from '../domain/subnet-standing';

/*
 * The SQL of the subnet standing projection (`subnet_standing`). A row is replaced only by an event
 * later in the SETTLEMENT stream, so a redelivered or late earlier event changes nothing.
 */

const iso = (ms: number): string => new Date(ms).toISOString();
const ms = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8`;

const COLUMNS = `subnet_id AS "subnetId", provider_id AS "providerId", standing, stake::text AS stake,
  min_stake::text AS "minStake", ${ms('jailed_until')} AS "jailedUntilMs", ${ms('changed_at')} AS "changedAtMs",
  seq::float8 AS seq`;

/**
 * A provider's standing in a subnet, unless a later event's is stored; resolves with the row it
 * replaced (null: none), so the caller can tell what changed.
 */
export const upsertStanding = async (tx: Tx, row: StandingRow): Promise<StandingRow | null> => {
  const [before] = await tx.query<StandingRow>(
    `SELECT ${COLUMNS} FROM "${tx.schema}".subnet_standing
     WHERE subnet_id = $1 AND provider_id = $2 FOR UPDATE`,
    [row.subnetId, row.providerId],
  );
  await tx.execute(
    `INSERT INTO "${tx.schema}".subnet_standing
       (subnet_id, provider_id, standing, stake, min_stake, jailed_until, changed_at, seq)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (subnet_id, provider_id) DO UPDATE SET standing = $3, stake = $4, min_stake = $5,
       jailed_until = $6, changed_at = $7, seq = $8
     WHERE subnet_standing.seq < $8`,
    [
      row.subnetId,
      row.providerId,
      row.standing,
      row.stake,
      row.minStake,
      row.jailedUntilMs === null ? null : iso(row.jailedUntilMs),
      iso(row.changedAtMs),
      row.seq,
    ],
  );
  return before ?? null;
};

/** The standing of these providers in one subnet (one statement per round), by provider id. */
export const loadStandings = async (
  db: Database,
  subnetId: string,
  providerIds: readonly string[],
): Promise<ReadonlyMap<string, StandingRow>> => {
  if (providerIds.length === 0) return new Map();
  const rows = await db.query<StandingRow>(
    `SELECT ${COLUMNS} FROM "${db.schema}".subnet_standing WHERE subnet_id = $1 AND provider_id = ANY($2)`,
    [subnetId, providerIds],
  );
  return new Map(rows.map((r) => [r.providerId, r]));
};
