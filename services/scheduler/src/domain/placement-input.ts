import {
  type CandidateProvider,
  modelWords,
  type PayloadOf,
  type JobFunded,
  type PlacedAllocation,
} from '@gpunet/contracts';
import type { GpuRequirement } from '@gpunet/ensemble-spec';
import {
  type ClusterSnapshotInput,
  gangRequest,
  type GangRequest,
  type HostInput,
  type Placement,
  type ProviderInput,
} from '@gpunet/scheduling';

/*
 * Mappings between the wire and the placement core (pure). The request itself comes from
 * `placement-plan.ts` (the spec, or a v1 job's terms). Discovery's candidates become a snapshot: one
 * host per provider edge, each provider its own site (no measured links yet). GPUs are named by
 * the job class they match (a v1 job's `gpuClasses`) or, for a spec, by the words of their reported
 * model, which the `gpu-model` filter the engine plugs in (`model-words.filter.ts`) matches by word
 * sequence, as discovery does.
 */

export type FundedJob = PayloadOf<typeof JobFunded>;

/** Default network figures while benchmarking has measured nothing. */
export const DEFAULT_NETWORK = {
  nicBandwidthBps: 10e9,
  lanBandwidthBps: 10e9,
  lanRttUs: 200,
  wanBandwidthBps: 1e9,
  wanRttUs: 30_000,
  nvlinkBps: 2.4e12,
  pcieBps: 2.5e11,
} as const;

/** The class label a spec model becomes (`H100-80GB` → `H100 80GB`). */
export const classLabel = (gpuClass: string): string => modelWords(gpuClass);

/** The requirement discovery filters candidates with. */
export const candidateRequirement = (job: FundedJob): GpuRequirement => ({
  count: job.gpus,
  vendor: 'any',
  models: [...new Set(job.gpuClasses.map(classLabel))].sort(),
  minVramBytes: 0,
  minComputeCapability: null,
  amdArchitectures: [],
  cuda: null,
  rocm: null,
  minTflops: { fp64: null, fp32: null, tf32: null, bf16: null, fp16: null, fp8: null, int8: null },
  mixedModels: false,
});

/** The core's request for a funded job. */
export const gangRequestFor = (job: FundedJob): GangRequest =>
  gangRequest({
    name: 'main',
    gpuCount: job.gpus,
    models: [...new Set(job.gpuClasses.map(classLabel))],
    maxNodes: job.gpus,
    maxPricePerGpuHourMinor: Number(job.terms.maxPricePerGpuHour),
  });

/** The snapshot the core schedules against, from discovery's candidates (all their GPUs are free). */
export const snapshotInput = (
  candidates: readonly CandidateProvider[],
  gpuClasses: readonly string[],
  /** GPUs held by rounds in flight (GPU uuid → job id), which discovery may still offer. */
  held: ReadonlyMap<string, string> = new Map(),
  jobId = '',
  /** Most free GPUs a provider may give this job (its CPU/memory fit only so many ranks); default all. */
  gpuCap: (c: CandidateProvider) => number = () => Infinity,
): ClusterSnapshotInput => {
  const labels = gpuClasses.map(classLabel);
  const labelOf = (reported: string): string => {
    const words = ` ${modelWords(reported)} `;
    return labels.find((l) => words.includes(` ${l} `)) ?? modelWords(reported);
  };
  const heldByOther = (uuid: string): boolean => held.has(uuid) && held.get(uuid) !== jobId;
  // GPU ids are the network's keys; two providers claiming one (a copied simulated inventory, a
  // forged report) must not poison every round: the first claim in candidate order keeps it.
  const claimed = new Set<string>();
  const firstClaim = (uuid: string): boolean => !claimed.has(uuid) && claimed.add(uuid) !== undefined;
  const providers = candidates.map((input): ProviderInput => {
    const cap = gpuCap(input);
    let free = 0;
    const c = {
      ...input,
      gpus: input.gpus.filter((g) => firstClaim(g.uuid) && (heldByOther(g.uuid) || free++ < cap)),
    };
    const prices: Record<string, number> = {};
    for (const g of c.gpus) {
      const label = labelOf(g.model);
      const floor = g.priceFloorMinor === null ? 0 : Number(g.priceFloorMinor);
      prices[label] = Math.max(prices[label] ?? 0, floor);
    }
    const nvlink = c.gpus.some((g) => g.directPeers.length > 0);
    const host: HostInput = {
      id: c.providerId,
      siteId: c.providerId,
      gpus: c.gpus.map((g) => ({
        uuid: g.uuid,
        model: labelOf(g.model),
        vendor: g.vendor,
        vramBytes: g.vramBytes,
        computeCapability: g.computeCapability,
        amdArch: g.architecture,
        driverVersion: null,
        cudaVersion: g.cudaVersion,
        rocmVersion: g.rocmVersion,
        tflops: {},
        tflopsMeasured: false,
        reservedBy: heldByOther(g.uuid) ? (held.get(g.uuid) ?? null) : null,
      })),
      intraHost: nvlink
        ? { kind: 'nvlink', bandwidthBps: DEFAULT_NETWORK.nvlinkBps, latencyUs: 2 }
        : { kind: 'pcie', bandwidthBps: DEFAULT_NETWORK.pcieBps, latencyUs: 5 },
      nicBandwidthBps: DEFAULT_NETWORK.nicBandwidthBps,
      coordinates: null,
    };
    return {
      id: c.providerId,
      location: { ...c.location, asn: null, isp: null },
      policy: {
        liveness: 'online',
        maxGpusPerJob: c.maxGpusPerJob,
        pricePerGpuHourMinor: prices,
        defaultPricePerGpuHourMinor: null,
        subnets: c.subnets,
      },
      hosts: [host],
    };
  });
  return {
    providers,
    network: {
      sites: candidates.map((c) => ({
        id: c.providerId,
        lanBandwidthBps: DEFAULT_NETWORK.lanBandwidthBps,
        lanRttUs: DEFAULT_NETWORK.lanRttUs,
        coordinates: null,
      })),
      hostLinks: [],
      siteLinks: [],
      defaultWanBandwidthBps: DEFAULT_NETWORK.wanBandwidthBps,
      defaultWanRttUs: DEFAULT_NETWORK.wanRttUs,
    },
  };
};

/** The core's placement as the allocations of `job.placed`, one reservation per node. */
export const placedAllocations = (
  placement: Placement,
  reservationId: (providerId: string, index: number) => string,
): PlacedAllocation[] => {
  let i = 0;
  return placement.allocations.map((a) => ({
    name: a.name,
    gpuCount: a.gpuCount,
    nodes: a.nodes.map((n) => ({
      providerId: n.providerId,
      hostId: n.hostId,
      gpuUuids: [...n.gpuUuids],
      reservationId: reservationId(n.providerId, i++),
      ranks: Math.max(1, n.ranks),
    })),
    predictedStepUs: a.prediction.stepUs,
    pricePerHourMinor: String(Math.max(0, Math.round(a.pricePerHourMinor))),
  }));
};

/**
 * Discovery's answers to several queries (one per allocation) as one candidate list: a provider
 * once, with the union of the GPUs any query offered, by index.
 */
export const mergeCandidates = (lists: readonly (readonly CandidateProvider[])[]): CandidateProvider[] => {
  const byId = new Map<string, CandidateProvider>();
  for (const list of lists) {
    for (const c of list) {
      const seen = byId.get(c.providerId);
      if (!seen) {
        byId.set(c.providerId, c);
        continue;
      }
      const uuids = new Set(seen.gpus.map((g) => g.uuid));
      const gpus = [...seen.gpus, ...c.gpus.filter((g) => !uuids.has(g.uuid))].sort(
        (a, b) => a.index - b.index,
      );
      byId.set(c.providerId, { ...seen, gpus });
    }
  }
  return [...byId.values()];
};

/**
 * Most free GPUs of a provider one allocation may use: whole ranks its CPU and memory can run
 * (`cpuMillicores / perRank.cpuMillicores`, the same for memory) × GPUs per rank. Unlimited when a
 * rank asks for no CPU or memory (a v1 job).
 */
export const rankCapacity =
  (perRank: { readonly cpuMillicores: number; readonly memoryBytes: number }, gpusPerRank: number) =>
  (c: CandidateProvider): number => {
    const byCpu = perRank.cpuMillicores > 0 ? Math.floor(c.cpuMillicores / perRank.cpuMillicores) : Infinity;
    const byMemory = perRank.memoryBytes > 0 ? Math.floor(c.memoryBytes / perRank.memoryBytes) : Infinity;
    return Math.min(byCpu, byMemory) * Math.max(1, gpusPerRank);
  };
