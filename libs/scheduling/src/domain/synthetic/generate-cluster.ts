import type { Precision } from '../model/precision';
import type {
  ClusterSnapshotInput,
  GpuInput,
  HostInput,
  LinkInput,
  NetworkCoordinate,
  ProviderInput,
  SiteInput,
} from '../model/snapshot-input';
import { type GangRequest, gangRequest } from '../model/request';
import { createPrng } from '../random/prng';
import { GPU_CATALOG, type GpuModelSpec } from './gpu-catalog';

/**
 * Seeded synthetic clusters for tests and benchmarks: a decentralized network of data centres,
 * professional operators and home rigs spread over regions. Same (spec, seed) → same cluster.
 */
export interface SyntheticClusterSpec {
  readonly providers: number;
  /** Metro regions; sites in one region are a few ms apart, regions tens of ms. Default 12. */
  readonly regions?: number;
  /** Share of GPUs already reserved (by `synthetic-busy`). Default 0. */
  readonly reservedFraction?: number;
  /** Subnets; each provider joins 1–2. Default `['public', 'ai']`. */
  readonly subnets?: readonly string[];
  /** Share of GPUs whose TFLOPS are measured (0.85–1.0 × datasheet); the rest are declared. Default 0.7. */
  readonly measuredFraction?: number;
  /** Share of providers with a per-job GPU cap. Default 0.1. */
  readonly cappedFraction?: number;
}

type Archetype = 'datacenter' | 'operator' | 'home';

interface ArchetypeSpec {
  readonly share: number;
  readonly hosts: readonly [number, number];
  readonly gpusPerHost: readonly number[];
  readonly models: readonly (readonly [string, number])[];
  readonly nicGbps: readonly number[];
  /** How many providers share one site (a colocation facility); 1 = own site. */
  readonly providersPerSite: number;
  readonly lanGbps: number;
  readonly lanRttUs: number;
}

const ARCHETYPES: Readonly<Record<Archetype, ArchetypeSpec>> = {
  datacenter: {
    share: 0.05,
    hosts: [4, 16],
    gpusPerHost: [8],
    models: [
      ['H100-SXM', 4],
      ['A100-80G', 4],
      ['MI300X', 1],
      ['MI250X', 1],
    ],
    nicGbps: [200, 400],
    providersPerSite: 1,
    lanGbps: 400,
    lanRttUs: 20,
  },
  operator: {
    share: 0.35,
    hosts: [1, 2],
    gpusPerHost: [4, 8],
    models: [
      ['A100-40G', 3],
      ['L40S', 3],
      ['RTX-A6000', 2],
      ['V100-32G', 2],
      ['A100-80G', 1],
      ['T4', 1],
    ],
    nicGbps: [25, 100],
    providersPerSite: 20,
    lanGbps: 100,
    lanRttUs: 100,
  },
  home: {
    share: 0.6,
    hosts: [1, 1],
    gpusPerHost: [1, 2, 2, 4],
    models: [
      ['RTX-4090', 5],
      ['RTX-3090', 4],
      ['RTX-A6000', 1],
    ],
    nicGbps: [1, 2.5, 10],
    providersPerSite: 1,
    lanGbps: 10,
    lanRttUs: 300,
  },
};

const CONTINENTS = ['EU', 'NA', 'AS', 'SA', 'OC', 'AF'] as const;
const COUNTRIES: Readonly<Record<(typeof CONTINENTS)[number], readonly string[]>> = {
  EU: ['DE', 'NL', 'FR', 'FI', 'PL'],
  NA: ['US', 'CA'],
  AS: ['JP', 'SG', 'KR', 'IN'],
  SA: ['BR', 'CL'],
  OC: ['AU'],
  AF: ['ZA'],
};

export const generateCluster = (spec: SyntheticClusterSpec, seed: number): ClusterSnapshotInput => {
  const rnd = createPrng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const weighted = (xs: readonly (readonly [string, number])[]): string => {
    const total = xs.reduce((s, [, w]) => s + w, 0);
    let r = rnd() * total;
    for (const [v, w] of xs) {
      r -= w;
      if (r < 0) return v;
    }
    return xs[xs.length - 1]![0];
  };
  const regionCount = spec.regions ?? 12;
  const subnets = spec.subnets ?? ['public', 'ai'];
  const measured = spec.measuredFraction ?? 0.7;
  const reserved = spec.reservedFraction ?? 0;
  const capped = spec.cappedFraction ?? 0.1;

  // Regions sit on a 2-D plane in µs of one-way distance: ~20–150 ms RTT between regions.
  const regions = Array.from({ length: regionCount }, (_, i) => {
    const continent = CONTINENTS[i % CONTINENTS.length]!;
    return {
      id: `r${i}`,
      continent,
      country: pick(COUNTRIES[continent]),
      center: { x: rnd() * 80_000, y: rnd() * 40_000 },
    };
  });
  const sites: SiteInput[] = [];
  const siteLinks: LinkInput[] = [];
  const providers: ProviderInput[] = [];
  const openSites = new Map<string, { id: string; left: number; region: number }>();
  const datacenterSites: { id: string; coordinates: NetworkCoordinate }[] = [];

  const newSite = (kind: Archetype, region: number): string => {
    const a = ARCHETYPES[kind];
    const r = regions[region]!;
    const id = `s${sites.length}-${kind}-${r.id}`;
    const coordinates: NetworkCoordinate = {
      x: r.center.x + (rnd() - 0.5) * 4000,
      y: r.center.y + (rnd() - 0.5) * 4000,
      height: kind === 'home' ? 2000 + rnd() * 8000 : 100 + rnd() * 400,
    };
    sites.push({ id, lanBandwidthBps: a.lanGbps * 1e9, lanRttUs: a.lanRttUs, coordinates });
    if (kind === 'datacenter') datacenterSites.push({ id, coordinates });
    return id;
  };

  let gpuSeq = 0;
  for (let p = 0; p < spec.providers; p++) {
    const u = rnd();
    const kind: Archetype =
      u < ARCHETYPES.datacenter.share
        ? 'datacenter'
        : u < ARCHETYPES.datacenter.share + ARCHETYPES.operator.share
          ? 'operator'
          : 'home';
    const a = ARCHETYPES[kind];
    const region = int(0, regionCount - 1);
    let siteId: string;
    if (a.providersPerSite > 1) {
      const key = `${kind}:${region}`;
      let open = openSites.get(key);
      if (open === undefined || open.left === 0) {
        open = { id: newSite(kind, region), left: a.providersPerSite, region };
        openSites.set(key, open);
      }
      open.left--;
      siteId = open.id;
    } else {
      siteId = newSite(kind, region);
    }
    const model: GpuModelSpec = GPU_CATALOG[weighted(a.models)]!;
    const hosts: HostInput[] = [];
    const hostCount = int(a.hosts[0], a.hosts[1]);
    const gpusPerHost = pick(a.gpusPerHost);
    const nic = pick(a.nicGbps) * 1e9;
    for (let h = 0; h < hostCount; h++) {
      const gpus: GpuInput[] = [];
      for (let g = 0; g < gpusPerHost; g++) {
        const isMeasured = rnd() < measured;
        const factor = isMeasured ? 0.85 + rnd() * 0.15 : 1;
        const tflops: Partial<Record<Precision, number>> = {};
        for (const [k, v] of Object.entries(model.tflops) as [Precision, number][]) tflops[k] = v * factor;
        gpus.push({
          uuid: `GPU-${(gpuSeq++).toString(16).padStart(8, '0')}`,
          model: model.model,
          vendor: model.vendor,
          vramBytes: model.vramBytes,
          computeCapability: model.computeCapability,
          amdArch: model.amdArch,
          driverVersion: model.vendor === 'nvidia' ? pick(['535.183', '550.90', '560.35']) : null,
          cudaVersion: model.vendor === 'nvidia' ? pick(['12.2', '12.4', '12.6', '11.8']) : null,
          rocmVersion: model.vendor === 'amd' ? pick(['6.0.2', '6.1.3', '6.2.0']) : null,
          tflops,
          tflopsMeasured: isMeasured,
          reservedBy: rnd() < reserved ? 'synthetic-busy' : null,
        });
      }
      hosts.push({
        id: `p${p}-h${h}`,
        siteId,
        gpus,
        intraHost: model.intraHost,
        nicBandwidthBps: nic,
        coordinates: null,
      });
    }
    const r = regions[region]!;
    const priceFactor = 0.7 + rnd() * 0.6;
    providers.push({
      id: `p${p}`,
      location: {
        continent: r.continent,
        country: r.country,
        city: r.id,
        asn: 64_500 + int(0, 40),
        isp: null,
      },
      policy: {
        liveness: rnd() < 0.98 ? 'online' : 'offline',
        maxGpusPerJob: rnd() < capped ? pick([4, 8, 16]) : null,
        pricePerGpuHourMinor: { [model.model]: Math.round(model.pricePerGpuHourMinor * priceFactor) },
        defaultPricePerGpuHourMinor: null,
        subnets: rnd() < 0.5 ? [subnets[0]!] : subnets.slice(0, 2),
      },
      hosts,
    });
  }
  // Benchmarking measures links between data centres: a few per site.
  for (let i = 0; i < datacenterSites.length; i++) {
    for (let k = 0; k < 3 && datacenterSites.length > 1; k++) {
      const j = int(0, datacenterSites.length - 1);
      if (j === i) continue;
      const a = datacenterSites[i]!;
      const b = datacenterSites[j]!;
      const d =
        Math.hypot(a.coordinates.x - b.coordinates.x, a.coordinates.y - b.coordinates.y) +
        a.coordinates.height +
        b.coordinates.height;
      siteLinks.push({
        a: a.id,
        b: b.id,
        bandwidthBps: pick([10, 25, 100]) * 1e9,
        rttUs: Math.round(d * (0.9 + rnd() * 0.2)),
      });
    }
  }
  return {
    providers,
    network: { sites, hostLinks: [], siteLinks, defaultWanBandwidthBps: 2.5e9, defaultWanRttUs: 80_000 },
  };
};

export interface SmallClusterSpec {
  /** Total GPUs at most (default 40). */
  readonly maxGpus?: number;
  /** Hosts at most (default 8). */
  readonly maxHosts?: number;
}

/**
 * A small heterogeneous cluster (≤ 40 GPUs, ≤ 8 hosts, 2–3 sites in one or two regions) where the
 * exhaustive optimum is computable: for quality tests.
 */
export const generateSmallCluster = (seed: number, spec: SmallClusterSpec = {}): ClusterSnapshotInput => {
  const rnd = createPrng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const maxGpus = spec.maxGpus ?? 40;
  const models = ['H100-SXM', 'A100-80G', 'A100-40G', 'L40S', 'RTX-4090', 'V100-32G'];
  const siteCount = int(2, 3);
  const twoRegions = rnd() < 0.5;
  const sites: SiteInput[] = Array.from({ length: siteCount }, (_, i) => ({
    id: `site${i}`,
    lanBandwidthBps: pick([25, 100, 200]) * 1e9,
    lanRttUs: pick([20, 50, 150]),
    coordinates: {
      x: (twoRegions && i === siteCount - 1 ? 30_000 : 0) + rnd() * 3000,
      y: rnd() * 3000,
      height: 100 + rnd() * 500,
    },
  }));
  const providers: ProviderInput[] = [];
  let gpus = 0;
  let seq = 0;
  const hostCount = int(3, spec.maxHosts ?? 8);
  for (let h = 0; h < hostCount && gpus < maxGpus; h++) {
    const spec = GPU_CATALOG[pick(models)]!;
    const n = Math.min(pick([1, 2, 4, 4, 8, 8]), maxGpus - gpus);
    gpus += n;
    const list: GpuInput[] = Array.from({ length: n }, () => {
      const factor = 0.85 + rnd() * 0.15;
      const tflops: Partial<Record<Precision, number>> = {};
      for (const [k, v] of Object.entries(spec.tflops) as [Precision, number][]) tflops[k] = v * factor;
      return {
        uuid: `g${seq++}`,
        model: spec.model,
        vendor: spec.vendor,
        vramBytes: spec.vramBytes,
        computeCapability: spec.computeCapability,
        amdArch: spec.amdArch,
        driverVersion: '550.90',
        cudaVersion: '12.4',
        rocmVersion: null,
        tflops,
        tflopsMeasured: true,
        reservedBy: rnd() < 0.1 ? 'busy' : null,
      };
    });
    providers.push({
      id: `p${h}`,
      location: { continent: 'EU', country: 'DE', city: null, asn: null, isp: null },
      policy: {
        liveness: 'online',
        maxGpusPerJob: null,
        pricePerGpuHourMinor: { [spec.model]: Math.round(spec.pricePerGpuHourMinor * (0.7 + rnd() * 0.6)) },
        defaultPricePerGpuHourMinor: null,
        subnets: ['public'],
      },
      hosts: [
        {
          id: `h${h}`,
          siteId: pick(sites).id,
          gpus: list,
          intraHost: rnd() < 0.5 ? spec.intraHost : { kind: 'pcie', bandwidthBps: 1e11, latencyUs: 8 },
          nicBandwidthBps: pick([10, 25, 100, 200]) * 1e9,
          coordinates: null,
        },
      ],
    });
  }
  return {
    providers,
    network: {
      sites,
      hostLinks: [],
      siteLinks: [],
      defaultWanBandwidthBps: pick([1, 5, 10]) * 1e9,
      defaultWanRttUs: 50_000,
    },
  };
};

/**
 * One instance of the quality benchmark: a small cluster and a pack gang of 2–16 GPUs that its
 * free GPUs can hold in principle (mixed models allowed in half of them, max nodes 2–6).
 */
export const generateQualityInstance = (
  seed: number,
): { readonly cluster: ClusterSnapshotInput; readonly request: GangRequest } => {
  const input = generateSmallCluster(seed);
  const rnd = createPrng(seed ^ 0x9e3779b9);
  const free = input.providers.flatMap((p) =>
    p.hosts.flatMap((h) => h.gpus.filter((g) => g.reservedBy === null)),
  );
  const gpuCount = Math.max(2, Math.min(16, 2 + Math.floor(rnd() * (free.length - 1))));
  return {
    cluster: input,
    request: gangRequest({
      name: 'q',
      gpuCount,
      mixedModels: rnd() < 0.5,
      maxNodes: 2 + Math.floor(rnd() * 5),
      placement: 'pack',
    }),
  };
};
