import type { AvailabilityWindow, CandidateGpu, CandidateProvider } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import type { CandidateCriteria } from '../domain/candidate.filter';

/** A provider row with its matching GPUs, before the checks done outside SQL. */
export interface CandidateRow {
  readonly provider: Omit<CandidateProvider, 'gpus'> & {
    readonly availability: { timeZone: string; windows: AvailabilityWindow[] } | null;
  };
  readonly gpus: readonly CandidateGpu[];
}

type GpuTuple = [
  string,
  number,
  'nvidia' | 'amd',
  string,
  number,
  number | null,
  string | null,
  string | null,
  string | null,
  string | null,
  string | null,
  number[],
];

interface Row {
  provider_id: string;
  name: string;
  simulated: boolean;
  cpu_architecture: string;
  cpu_millicores: number;
  memory_bytes: string;
  continent: CandidateProvider['location']['continent'];
  country: string | null;
  city: string | null;
  subnets: string[];
  max_gpus_per_job: number;
  max_job_ms: string | null;
  asset: string;
  last_seen_at: Date | null;
  availability: { timeZone: string; windows: AvailabilityWindow[] } | null;
  gpus: GpuTuple[];
}

/**
 * One page of providers (keyset by provider id, after `cursor`) with their offered GPUs that pass
 * every filter SQL can apply; version ranges, availability windows and locations are checked by the
 * caller. The walk follows the `gpus_offered` index in provider order, so a page costs what it returns.
 */
export const findCandidateRows = async (
  db: Pick<Database, 'query' | 'schema'>,
  c: CandidateCriteria,
  cursor: string | null,
  limit: number,
): Promise<CandidateRow[]> => {
  const s = db.schema;
  const rows = await db.query<Row>(
    `SELECT p.provider_id, p.name, p.simulated, p.cpu_architecture, p.cpu_millicores, p.memory_bytes, p.continent,
            p.country, p.city, p.subnets, p.max_gpus_per_job, p.max_job_ms, p.asset, p.last_seen_at, p.availability,
            json_agg(json_build_array(g.uuid, g.idx, g.vendor, g.model, g.vram_bytes, g.compute_cap, g.cuda_version,
              g.rocm_version, g.architecture, g.pci_bus_id, g.price_floor::text, g.direct_peers) ORDER BY g.vendor, g.idx) AS gpus
       FROM "${s}".gpus g JOIN "${s}".providers p ON p.provider_id = g.provider_id
      WHERE g.available
        AND ($1::text IS NULL OR g.provider_id > $1)
        AND ($2::text IS NULL OR g.vendor = $2)
        AND g.vram_bytes >= $3
        AND (cardinality($4::text[]) = 0 OR EXISTS (SELECT 1 FROM unnest($4::text[]) m WHERE strpos(g.model_words, m) > 0))
        AND ($5::int IS NULL OR g.vendor <> 'nvidia' OR g.compute_cap >= $5)
        AND (cardinality($6::text[]) = 0 OR g.vendor <> 'amd' OR g.architecture = ANY($6::text[]))
        AND ($7::text IS NULL OR (p.asset = $7 AND (g.price_floor IS NULL OR g.price_floor <= $8::numeric)))
        AND p.status = 'online'
        AND p.cpu_millicores >= $9 AND p.memory_bytes >= $10
        AND ($11::text IS NULL OR p.cpu_architecture = $11)
        AND ($12::text IS NULL OR $12 = ANY(p.subnets))
        AND ($13::text IS NULL OR EXISTS (SELECT 1 FROM unnest(p.images) pre WHERE pre = '*' OR starts_with($13, pre)))
        AND ($14::bigint IS NULL OR p.max_job_ms IS NULL OR p.max_job_ms >= $14)
        AND ($15::boolean OR NOT p.simulated)
        AND NOT (g.provider_id = ANY($16::text[]))
      GROUP BY g.provider_id, p.provider_id
     HAVING least(count(*), p.max_gpus_per_job) >= $17
      ORDER BY g.provider_id
      LIMIT $18`,
    [
      cursor,
      c.vendor,
      c.minVramBytes,
      c.models,
      c.minComputeCapability,
      c.amdArchitectures,
      c.asset,
      c.maxPriceMinor,
      c.minCpuMillicores,
      c.minMemoryBytes,
      c.cpuArchitecture,
      c.subnet,
      c.image,
      c.maxDurationMs,
      c.includeSimulated,
      c.excludeProviders,
      c.minGpusPerProvider,
      limit,
    ],
  );
  return rows.map((r) => ({
    provider: {
      providerId: r.provider_id,
      name: r.name,
      simulated: r.simulated,
      cpuArchitecture: r.cpu_architecture,
      cpuMillicores: r.cpu_millicores,
      memoryBytes: Number(r.memory_bytes),
      location: { continent: r.continent, country: r.country, city: r.city },
      subnets: r.subnets,
      maxGpusPerJob: r.max_gpus_per_job,
      maxJobDurationMs: r.max_job_ms === null ? null : Number(r.max_job_ms),
      asset: r.asset,
      lastSeenAt: r.last_seen_at === null ? null : r.last_seen_at.toISOString(),
      availability: r.availability,
    },
    gpus: r.gpus.map(([uuid, index, vendor, model, vram, cc, cuda, rocm, arch, pci, floor, peers]) => ({
      uuid,
      index,
      vendor,
      model,
      vramBytes: Number(vram),
      computeCapability: cc === null ? null : { major: Math.floor(cc / 10), minor: cc % 10 },
      cudaVersion: cuda,
      rocmVersion: rocm,
      architecture: arch,
      pciBusId: pci,
      priceFloorMinor: floor,
      directPeers: peers,
    })),
  }));
};
