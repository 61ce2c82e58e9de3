import type { Database, Tx } from '@gpunet/eventing';
import {
  type ChallengeFailureRow,
  type CoordinateRow,
  type LinkRow,
  type Measurements,
  type MeasuredGpu,
  NO_MEASUREMENTS,
  type ProfileRow,
  type ReliabilityRow,
  type VerificationRow,
} from '../domain/measurements';

/*
 * The SQL of the measurements projection (`gpu_profiles`, `links`, `coordinates`, and the trust
 * tables `gpu_verification`, `provider_reliability`, `challenge_failures`). Every upsert
 * keeps the newest figure (a redelivered or late older event changes nothing), so applying the
 * consumed events in any order converges.
 */

const iso = (ms: number): string => new Date(ms).toISOString();

/** A provider's profile, unless a newer one is stored. */
export const upsertProfile = async (tx: Tx, p: ProfileRow): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".gpu_profiles (provider_id, simulated, gpus, peers, measured_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (provider_id) DO UPDATE SET simulated = $2, gpus = $3, peers = $4, measured_at = $5, expires_at = $6
     WHERE gpu_profiles.measured_at <= $5`,
    [
      p.providerId,
      p.simulated,
      JSON.stringify(p.gpus),
      JSON.stringify(p.peers),
      iso(p.measuredAtMs),
      iso(p.expiresAtMs),
    ],
  );
};

/**
 * One direction of a link, unless a newer measurement of it is stored. An RTT-only measurement
 * keeps the direction's previous throughput while that one is live at the new measurement's time
 * (probes transfer to one peer in several per cycle).
 */
export const upsertLink = async (tx: Tx, l: LinkRow): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".links (a, b, rtt_us, throughput_bps, same_site, relayed, measured_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (a, b) DO UPDATE SET rtt_us = $3,
       throughput_bps = COALESCE($4,
         CASE WHEN links.expires_at > $7 AND links.relayed = $6 THEN links.throughput_bps END),
       same_site = $5, relayed = $6, measured_at = $7, expires_at = $8
     WHERE links.measured_at <= $7`,
    [l.a, l.b, l.rttUs, l.throughputBps, l.sameSite, l.relayed, iso(l.measuredAtMs), iso(l.expiresAtMs)],
  );
};

/**
 * A refit's coordinates in one statement (a first fit lists every host, up to 5,000), each unless
 * a newer fit's is stored. A host listed twice keeps its last entry.
 */
export const upsertCoordinates = async (tx: Tx, rows: readonly CoordinateRow[]): Promise<void> => {
  const unique = [...new Map(rows.map((c) => [c.hostId, c])).values()];
  if (unique.length === 0) return;
  await tx.execute(
    `INSERT INTO "${tx.schema}".coordinates (host_id, x, y, height, error, site_id, fitted_at, expires_at)
     SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[], $4::float8[], $5::float8[], $6::text[],
       $7::timestamptz[], $8::timestamptz[])
     ON CONFLICT (host_id) DO UPDATE SET x = EXCLUDED.x, y = EXCLUDED.y, height = EXCLUDED.height,
       error = EXCLUDED.error, site_id = EXCLUDED.site_id, fitted_at = EXCLUDED.fitted_at,
       expires_at = EXCLUDED.expires_at
     WHERE coordinates.fitted_at <= EXCLUDED.fitted_at`,
    [
      unique.map((c) => c.hostId),
      unique.map((c) => c.x),
      unique.map((c) => c.y),
      unique.map((c) => c.height),
      unique.map((c) => c.error),
      unique.map((c) => c.siteId),
      unique.map((c) => iso(c.fittedAtMs)),
      unique.map((c) => iso(c.expiresAtMs)),
    ],
  );
};

/**
 * A provider's verification, unless a newer one is stored; resolves with the row it replaced (null:
 * none, or the stored one is newer and stays), so the caller can tell what changed.
 */
export const upsertVerification = async (tx: Tx, v: VerificationRow): Promise<VerificationRow | null> => {
  const [before] = await tx.query<VerificationRow>(
    `SELECT provider_id AS "providerId", gpus, cause, challenge_id AS "challengeId",
       ${ms('changed_at')} AS "atMs"
     FROM "${tx.schema}".gpu_verification WHERE provider_id = $1 FOR UPDATE`,
    [v.providerId],
  );
  await tx.execute(
    `INSERT INTO "${tx.schema}".gpu_verification (provider_id, gpus, cause, challenge_id, changed_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (provider_id) DO UPDATE SET gpus = $2, cause = $3, challenge_id = $4, changed_at = $5
     WHERE gpu_verification.changed_at <= $5`,
    [v.providerId, JSON.stringify(v.gpus), v.cause, v.challengeId, iso(v.atMs)],
  );
  return before ?? null;
};

/** A provider's reliability, unless a newer score is stored. */
export const upsertReliability = async (tx: Tx, r: ReliabilityRow): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".provider_reliability (provider_id, score, changed_at)
     VALUES ($1, $2, $3)
     ON CONFLICT (provider_id) DO UPDATE SET score = $2, changed_at = $3
     WHERE provider_reliability.changed_at <= $3`,
    [r.providerId, r.score, iso(r.atMs)],
  );
};

/** A GPU's failed challenge, unless a newer failure of it is stored. */
export const upsertChallengeFailure = async (tx: Tx, f: ChallengeFailureRow): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".challenge_failures (gpu_uuid, provider_id, challenge_id, kind, failed_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (gpu_uuid) DO UPDATE SET provider_id = $2, challenge_id = $3, kind = $4, failed_at = $5
     WHERE challenge_failures.failed_at <= $5`,
    [f.gpuUuid, f.providerId, f.challengeId, f.kind, iso(f.atMs)],
  );
};

const ms = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8`;

interface LoadedRow {
  profiles: {
    providerId: string;
    simulated: boolean;
    gpus: MeasuredGpu[];
    peers: ProfileRow['peers'];
    measuredAtMs: number;
    expiresAtMs: number;
  }[];
  links: LinkRow[];
  coordinates: CoordinateRow[];
  verification: VerificationRow[];
  reliability: ReliabilityRow[];
  failures: ChallengeFailureRow[];
}

/**
 * Everything the projection holds for these providers — their profiles, the links between two of
 * them, their coordinates, their GPUs' verification, reliability and failed challenges — in one
 * statement (one round trip per placement round, whatever the
 * number of candidates). Expired rows come too: the snapshot mapping judges expiry at the round's
 * time.
 */
export const loadMeasurements = async (
  db: Database,
  providerIds: readonly string[],
): Promise<Measurements> => {
  if (providerIds.length === 0) return NO_MEASUREMENTS;
  const s = db.schema;
  const [row] = await db.query<LoadedRow>(
    `SELECT
       (SELECT coalesce(json_agg(json_build_object(
           'providerId', provider_id, 'simulated', simulated, 'gpus', gpus, 'peers', peers,
           'measuredAtMs', ${ms('measured_at')}, 'expiresAtMs', ${ms('expires_at')})), '[]'::json)
          FROM "${s}".gpu_profiles WHERE provider_id = ANY($1)) AS profiles,
       (SELECT coalesce(json_agg(json_build_object(
           'a', a, 'b', b, 'rttUs', rtt_us, 'throughputBps', throughput_bps, 'sameSite', same_site,
           'relayed', relayed, 'measuredAtMs', ${ms('measured_at')}, 'expiresAtMs', ${ms('expires_at')})), '[]'::json)
          FROM "${s}".links WHERE a = ANY($1) AND b = ANY($1)) AS links,
       (SELECT coalesce(json_agg(json_build_object(
           'hostId', host_id, 'x', x, 'y', y, 'height', height, 'error', error, 'siteId', site_id,
           'fittedAtMs', ${ms('fitted_at')}, 'expiresAtMs', ${ms('expires_at')})), '[]'::json)
          FROM "${s}".coordinates WHERE host_id = ANY($1)) AS coordinates,
       (SELECT coalesce(json_agg(json_build_object(
           'providerId', provider_id, 'gpus', gpus, 'cause', cause, 'challengeId', challenge_id,
           'atMs', ${ms('changed_at')})), '[]'::json)
          FROM "${s}".gpu_verification WHERE provider_id = ANY($1)) AS verification,
       (SELECT coalesce(json_agg(json_build_object(
           'providerId', provider_id, 'score', score, 'atMs', ${ms('changed_at')})), '[]'::json)
          FROM "${s}".provider_reliability WHERE provider_id = ANY($1)) AS reliability,
       (SELECT coalesce(json_agg(json_build_object(
           'challengeId', challenge_id, 'providerId', provider_id, 'gpuUuid', gpu_uuid, 'kind', kind,
           'atMs', ${ms('failed_at')})), '[]'::json)
          FROM "${s}".challenge_failures WHERE provider_id = ANY($1)) AS failures`,
    [providerIds],
  );
  return {
    profiles: new Map(row!.profiles.map((p) => [p.providerId, p])),
    links: row!.links,
    coordinates: new Map(row!.coordinates.map((c) => [c.hostId, c])),
    verification: new Map(row!.verification.map((v) => [v.providerId, v])),
    reliability: new Map(row!.reliability.map((r) => [r.providerId, r])),
    challengeFailures: new Map(row!.failures.map((f) => [f.gpuUuid, f])),
  };
};
