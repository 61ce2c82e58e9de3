import type { AvailabilityWindow, IsolationLevel } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import type { IndexedGpu, IndexedProvider } from '../domain/candidate-index';

type GpuTuple = [
  string,
  number,
  'nvidia' | 'amd',
  string,
  string,
  number,
  number | null,
  string | null,
  string | null,
  string | null,
  string | null,
  string | null,
  number[],
  boolean,
];

interface Row {
  provider_id: string;
  stream_version: number;
  status: IndexedProvider['status'];
  name: string;
  simulated: boolean;
  isolation: IsolationLevel;
  isolation_detail: string;
  cpu_architecture: string;
  cpu_millicores: number;
  memory_bytes: string;
  continent: IndexedProvider['location']['continent'];
  country: string | null;
  city: string | null;
  subnets: string[];
  images: string[];
  max_gpus_per_job: number;
  max_job_ms: string | null;
  asset: string;
  availability: { timeZone: string; windows: AvailabilityWindow[] } | null;
  gpus: GpuTuple[] | null;
}

/**
 * Providers of the projection with their GPUs, for the in-memory candidate index: all of them
 * (`ids` omitted) or the given ones. Deregistered providers are left out.
 */
export const loadIndexedProviders = async (
  db: Pick<Database, 'query' | 'schema'>,
  ids?: readonly string[],
): Promise<{ providers: IndexedProvider[]; missing: string[] }> => {
  const s = db.schema;
  const rows = await db.query<Row>(
    `SELECT p.provider_id, p.stream_version, p.status, p.name, p.simulated, p.isolation, p.isolation_detail,
            p.cpu_architecture, p.cpu_millicores,
            p.memory_bytes, p.continent, p.country, p.city, p.subnets, p.images, p.max_gpus_per_job, p.max_job_ms,
            p.asset, p.availability,
            (SELECT json_agg(json_build_array(g.uuid, g.idx, g.vendor, g.model, g.model_words, g.vram_bytes, g.compute_cap,
                      g.cuda_version, g.rocm_version, g.architecture, g.pci_bus_id, g.price_floor::text, g.direct_peers,
                      g.available) ORDER BY g.vendor, g.idx)
               FROM "${s}".gpus g WHERE g.provider_id = p.provider_id) AS gpus
       FROM "${s}".providers p
      WHERE ($1::text[] IS NULL OR p.provider_id = ANY($1::text[]))`,
    [ids ?? null],
  );
  const found = new Set(rows.map((r) => r.provider_id));
  const toIndexed = indexedRow(sharedValues());
  return {
    providers: rows.map(toIndexed),
    missing: (ids ?? []).filter((id) => !found.has(id)),
  };
};

/**
 * One value for equal ones across a read: 80,000 GPUs carry a handful of distinct models, compute
 * capabilities, peer lists and floors. Each object the index holds is one more for every full
 * collection of discovery's heap to mark, and a candidate query's latency pays for those pauses.
 */
const sharedValues = () => {
  const pools = new Map<string, Map<string, unknown>>();
  return <T>(kind: string, key: string, make: () => T): T => {
    let pool = pools.get(kind);
    if (pool === undefined) pools.set(kind, (pool = new Map<string, unknown>()));
    if (!pool.has(key)) pool.set(key, make());
    return pool.get(key) as T;
  };
};

const indexedRow =
  (share: ReturnType<typeof sharedValues>) =>
  (r: Row): IndexedProvider => ({
    providerId: r.provider_id,
    version: r.stream_version,
    status: r.status,
    name: r.name,
    simulated: r.simulated,
    isolation: r.isolation,
    // A handful of distinct lines across every edge: one string each.
    isolationDetail: share('isolation', r.isolation_detail, () => r.isolation_detail),
    cpuArchitecture: r.cpu_architecture,
    cpuMillicores: r.cpu_millicores,
    memoryBytes: Number(r.memory_bytes),
    location: { continent: r.continent, country: r.country, city: r.city },
    subnets: r.subnets,
    images: r.images,
    maxGpusPerJob: r.max_gpus_per_job,
    maxJobDurationMs: r.max_job_ms === null ? null : Number(r.max_job_ms),
    asset: r.asset,
    availability: r.availability,
    gpus: (r.gpus ?? []).map(
      ([
        uuid,
        index,
        vendor,
        model,
        words,
        vram,
        cc,
        cuda,
        rocm,
        arch,
        pci,
        floor,
        peers,
        available,
      ]): IndexedGpu => ({
        uuid,
        index,
        vendor,
        model: share('model', model, () => model),
        modelWords: share('words', words, () => words),
        vramBytes: Number(vram),
        cc,
        computeCapability:
          cc === null
            ? null
            : share('cc', String(cc), () => ({ major: Math.floor(cc / 10), minor: cc % 10 })),
        cudaVersion: cuda,
        rocmVersion: rocm,
        architecture: arch,
        pciBusId: pci === null ? null : share('pci', pci, () => pci),
        priceFloorMinor: floor,
        floor: floor === null ? null : share('floor', floor, () => BigInt(floor)),
        directPeers: share('peers', peers.join(','), () => peers),
        available,
      }),
    ),
  });
