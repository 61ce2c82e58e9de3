import type {
  BenchmarkProfile,
  FindGpuProfiles,
  FindReliability,
  GetNetworkEstimate,
  QueryDefinition,
  QueryResponse,
  Reliability,
} from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import type { z } from 'zod';
import { RELIABILITY } from '../domain/reliability';

/** A request as the query server hands it over: validated, defaults applied. */
export type ServedRequest<Q extends QueryDefinition> = z.output<Q['request']>;

export interface ReliabilityRow {
  provider_id: string;
  reliability: number | null;
  mismatches: number | null;
  verified_runs: number | null;
  failed_runs: number | null;
  last_verified_at: Date | null;
  last_mismatch_at: Date | null;
}

export const reliabilityOf = (r: ReliabilityRow): Reliability => ({
  providerId: r.provider_id,
  score: r.reliability ?? RELIABILITY.INITIAL,
  mismatches: r.mismatches ?? 0,
  verifiedRuns: r.verified_runs ?? 0,
  failedRuns: r.failed_runs ?? 0,
  lastVerifiedAt: r.last_verified_at?.toISOString() ?? null,
  lastMismatchAt: r.last_mismatch_at?.toISOString() ?? null,
});

const RELIABILITY_COLUMNS = `p.provider_id, s.reliability, s.mismatches, s.verified_runs, s.failed_runs,
  s.last_verified_at, s.last_mismatch_at`;

/** Providers (not deregistered) in id order after `cursor`, optionally only `providerIds`. */
const page = (request: { providerIds: readonly string[]; cursor: string | null; limit: number }) => ({
  where: `p.status <> 'deregistered' AND ($1::text[] = '{}' OR p.provider_id = ANY($1)) AND ($2::text IS NULL OR p.provider_id > $2)`,
  params: [request.providerIds, request.cursor, request.limit + 1] as unknown[],
});

const nextCursor = <T extends { providerId: string }>(items: T[], limit: number) =>
  items.length > limit
    ? { items: items.slice(0, limit), nextCursor: items[limit - 1]!.providerId }
    : { items, nextCursor: null };

export const findGpuProfiles = async (
  db: Database,
  request: ServedRequest<typeof FindGpuProfiles>,
  now: Date,
): Promise<QueryResponse<typeof FindGpuProfiles>> => {
  const { where, params } = page(request);
  const rows = await db.query<
    ReliabilityRow & { simulated: boolean; profile: BenchmarkProfile | null; expires_at: Date | null }
  >(
    `SELECT ${RELIABILITY_COLUMNS}, p.simulated, g.profile, g.expires_at
       FROM "${db.schema}".providers p
       LEFT JOIN "${db.schema}".benchmark_state s USING (provider_id)
       LEFT JOIN "${db.schema}".gpu_profiles g USING (provider_id)
      WHERE ${where} AND ($4 OR g.expires_at IS NULL OR g.expires_at > $5)
      ORDER BY p.provider_id LIMIT $3`,
    [...params, request.includeExpired, now.toISOString()],
  );
  const items = rows.map((r) => {
    const expired = r.expires_at !== null && r.expires_at.getTime() <= now.getTime();
    return {
      providerId: r.provider_id,
      simulated: r.simulated,
      profile: r.profile,
      expired,
      reliability: reliabilityOf(r),
    };
  });
  return nextCursor(items, request.limit);
};

export const findReliability = async (
  db: Database,
  request: ServedRequest<typeof FindReliability>,
): Promise<QueryResponse<typeof FindReliability>> => {
  const { where, params } = page(request);
  const rows = await db.query<ReliabilityRow>(
    `SELECT ${RELIABILITY_COLUMNS} FROM "${db.schema}".providers p
       LEFT JOIN "${db.schema}".benchmark_state s USING (provider_id)
      WHERE ${where} ORDER BY p.provider_id LIMIT $3`,
    params,
  );
  return nextCursor(rows.map(reliabilityOf), request.limit);
};

export const getNetworkEstimate = async (
  db: Database,
  request: ServedRequest<typeof GetNetworkEstimate>,
  now: Date,
): Promise<QueryResponse<typeof GetNetworkEstimate>> => {
  const coordinates = await db.query<{
    host_id: string;
    x: number;
    y: number;
    height: number;
    error: number;
    site_id: string;
    updated_at: Date;
  }>(
    `SELECT host_id, x, y, height, error, site_id, updated_at FROM "${db.schema}".coordinates
      WHERE $1::text[] = '{}' OR host_id = ANY($1) ORDER BY host_id`,
    [request.hostIds],
  );
  const links = await db.query<{
    a: string;
    b: string;
    rtt_us: number;
    throughput_bps: number | null;
    same_site: boolean;
    path: 'direct' | 'overlay';
    measured_at: Date;
    expires_at: Date;
  }>(
    `SELECT a, b, rtt_us, throughput_bps, same_site, path, measured_at, expires_at FROM "${db.schema}".links
      WHERE ($1::text[] = '{}' OR (a = ANY($1) AND b = ANY($1))) AND ($2 OR expires_at > $3)
      ORDER BY a, b`,
    [request.hostIds, request.includeExpired, now.toISOString()],
  );
  return {
    coordinates: coordinates.map((c) => ({
      hostId: c.host_id,
      x: c.x,
      y: c.y,
      height: c.height,
      error: c.error,
      siteId: c.site_id,
      updatedAt: c.updated_at.toISOString(),
    })),
    links: links.map((l) => ({
      a: l.a,
      b: l.b,
      rttUs: l.rtt_us,
      throughputBitsPerSecond: l.throughput_bps,
      sameSite: l.same_site,
      path: l.path,
      measuredAt: l.measured_at.toISOString(),
      expiresAt: l.expires_at.toISOString(),
    })),
  };
};
