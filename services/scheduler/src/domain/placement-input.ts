import {
  type CandidateProvider,
  modelWords,
  type PayloadOf,
  type JobFunded,
  type PlacedAllocation,
} from '@gpunet/contracts';
import { findReference, TYPICAL_EFFICIENCY } from '@gpunet/edge-bench';
import type { GpuRequirement } from '@gpunet/ensemble-spec';
import {
  type ClusterSnapshotInput,
  DEFAULT_RELIABILITY,
  gangRequest,
  type GangRequest,
  type GpuInput,
  type HostInput,
  type IntraHostLink,
  type LinkInput,
  type Placement,
  type Precision,
  type ProviderInput,
  type SiteInput,
  type TrustRequirement,
} from '@gpunet/scheduling';
import type { IsolationView } from './isolation.filter';
import {
  gpuTrustOf,
  type Measurements,
  NO_MEASUREMENTS,
  pairLinks,
  type ProfileRow,
  type VerificationRow,
} from './measurements';

/*
 * Mappings between the wire and the placement core (pure). The request itself comes from
 * `placement-plan.ts` (the spec, or a v1 job's terms). Discovery's candidates and the scheduler's
 * projection of benchmarking's measurements (`measurements.ts`) become a snapshot: one host per
 * provider edge, at the site same-site detection put it in (its own until measured), with its GPUs'
 * measured TFLOPS (reference figures until benchmarked), its GPU topology and measured peer
 * bandwidth, the measured links between candidates and the hosts' network coordinates. GPUs are
 * named by the job class they match (a v1 job's `gpuClasses`) or, for a spec, by the words of their
 * reported model, which the `gpu-model` filter the engine plugs in (`model-words.filter.ts`) matches
 * by word sequence, as discovery does. Each GPU carries its trust: simulated when discovery, its
 * profile or its verification says so, its verification status and why (the failed challenge); each
 * provider its reliability score (`DEFAULT_RELIABILITY` until benchmarking scores it).
 */

export type FundedJob = PayloadOf<typeof JobFunded>;

/**
 * Figures for what benchmarking has not measured (or whose measurement expired): a LAN inside one
 * site, the WAN between sites, a host's NIC, and the link between a host's GPUs by kind.
 */
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

/**
 * The subnet's trust rules as the job was funded under them: simulated GPUs only where the subnet
 * allows them (discovery is not even asked for them elsewhere), and where it requires verified GPUs
 * only GPUs that are not simulated need to be verified — simulated GPUs are never challenged, so
 * `simulatedGpus` alone governs them.
 */
export const trustOf = (job: FundedJob): TrustRequirement => ({
  simulatedGpus: job.terms.trust.simulatedGpus,
  verifiedGpus: job.terms.trust.verifiedGpus,
  setBy: `subnet '${job.subnetId}'`,
});

/**
 * The isolation rule of a round: the job's subnet's minimum as the job was funded under it, and the
 * level discovery says each candidate's edge runs ranks with.
 */
export const isolationView = (job: FundedJob, candidates: readonly CandidateProvider[]): IsolationView => ({
  minimum: job.terms.trust.minimumIsolation,
  setBy: `subnet '${job.subnetId}'`,
  levels: new Map(candidates.map((c) => [c.providerId, c.isolation])),
});

/** The core's request for a funded job. */
export const gangRequestFor = (job: FundedJob): GangRequest =>
  gangRequest({
    name: 'main',
    gpuCount: job.gpus,
    models: [...new Set(job.gpuClasses.map(classLabel))],
    maxNodes: job.gpus,
    maxPricePerGpuHourMinor: Number(job.terms.maxPricePerGpuHour),
    trust: trustOf(job),
  });

/** The projection as of one round: the rows of its candidates, and the time their expiry is judged at. */
export interface MeasuredView {
  readonly measurements: Measurements;
  readonly atMs: number;
}

export const UNMEASURED: MeasuredView = { measurements: NO_MEASUREMENTS, atMs: 0 };

const REFERENCE_PRECISIONS = ['fp32', 'tf32', 'fp16', 'bf16'] as const satisfies readonly Precision[];

/**
 * What an unmeasured GPU of a reported model is taken to do: its data sheet's dense peak per
 * precision (`@gpunet/edge-bench`'s reference table) × the fraction a healthy device typically
 * measures, so that it compares fairly with measured GPUs in the step-time objective. Empty for a
 * model the table does not know.
 */
export const referenceTflops = (reportedModel: string): Partial<Record<Precision, number>> => {
  const ref = findReference(reportedModel);
  const out: Partial<Record<Precision, number>> = {};
  if (ref === null) return out;
  for (const p of REFERENCE_PRECISIONS) {
    const peak = ref.tflops[p];
    if (peak !== null) out[p] = Math.round(peak * TYPICAL_EFFICIENCY.matmul * 10) / 10;
  }
  return out;
};

type GpuFigures = Pick<GpuInput, 'tflops' | 'tflopsMeasured' | 'tflopsMeasuredAt'>;

/** A GPU's figures: its live profile's, matched by uuid (else index), else the reference ones. */
const gpuFigures = (gpu: CandidateProvider['gpus'][number], profile: ProfileRow | undefined): GpuFigures => {
  const measured =
    profile?.gpus.find((m) => m.uuid !== null && m.uuid === gpu.uuid) ??
    profile?.gpus.find((m) => m.uuid === null && m.index === gpu.index);
  if (profile !== undefined && measured !== undefined && Object.keys(measured.tflops).length > 0) {
    return {
      tflops: measured.tflops,
      tflopsMeasured: true,
      tflopsMeasuredAt: new Date(profile.measuredAtMs).toISOString(),
    };
  }
  return { tflops: referenceTflops(gpu.model), tflopsMeasured: false, tflopsMeasuredAt: null };
};

/**
 * The link between a host's (offered) GPUs: NVLink/xGMI when every one of them has a direct peer
 * among them (the edge's `nvidia-smi topo -m` / `rocm-smi --showtopo` links), else PCIe. Its
 * bandwidth is the slowest measured GPU-to-GPU copy among them when the live profile has one (a
 * ring goes as fast as its slowest hop), else the kind's default.
 */
export const intraHostLink = (
  gpus: readonly CandidateProvider['gpus'][number][],
  profile: ProfileRow | undefined,
): IntraHostLink => {
  const indices = new Set(gpus.map((g) => g.index));
  const direct = gpus.length > 1 && gpus.every((g) => g.directPeers.some((p) => indices.has(p)));
  const measured = (profile?.peers ?? []).filter((p) => indices.has(p.a) && indices.has(p.b));
  const bandwidth = measured.length === 0 ? null : Math.min(...measured.map((p) => p.bandwidthBps));
  if (direct) {
    const kind = gpus[0]!.vendor === 'amd' ? 'xgmi' : 'nvlink';
    return { kind, bandwidthBps: bandwidth ?? DEFAULT_NETWORK.nvlinkBps, latencyUs: 2 };
  }
  return { kind: 'pcie', bandwidthBps: bandwidth ?? DEFAULT_NETWORK.pcieBps, latencyUs: 5 };
};

/**
 * The snapshot's network from the live measurements between the candidates: same-site groups as
 * sites, measured pairs as host links (an RTT-only pair's bandwidth estimated, and marked so),
 * relayed pairs at the relay's figures. Estimates do not meet interconnect bounds
 * (`estimatesMeetBounds: false`): a pair nothing measured waits for benchmarking before a gang
 * with `max_rtt` / `min_bandwidth` spans it.
 */
const networkOf = (
  candidates: readonly CandidateProvider[],
  siteOf: (providerId: string) => string,
  view: MeasuredView,
): ClusterSnapshotInput['network'] => {
  const ids = new Set(candidates.map((c) => c.providerId));
  const sites = new Map<string, SiteInput>();
  for (const c of candidates) {
    const id = siteOf(c.providerId);
    if (!sites.has(id))
      sites.set(id, {
        id,
        lanBandwidthBps: DEFAULT_NETWORK.lanBandwidthBps,
        lanRttUs: DEFAULT_NETWORK.lanRttUs,
        coordinates: null,
      });
  }
  const hostLinks = pairLinks(view.measurements.links, view.atMs)
    .filter((l) => ids.has(l.a) && ids.has(l.b))
    .map((l): LinkInput => ({
      a: l.a,
      b: l.b,
      rttUs: l.rttUs,
      bandwidthBps:
        l.bandwidthBps ?? (l.sameSite ? DEFAULT_NETWORK.lanBandwidthBps : DEFAULT_NETWORK.wanBandwidthBps),
      bandwidthMeasured: l.bandwidthBps !== null,
      measuredAt: new Date(l.measuredAtMs).toISOString(),
      relayed: l.relayed,
    }));
  return {
    sites: [...sites.values()],
    hostLinks,
    siteLinks: [],
    defaultWanBandwidthBps: DEFAULT_NETWORK.wanBandwidthBps,
    defaultWanRttUs: DEFAULT_NETWORK.wanRttUs,
    estimatesMeetBounds: false,
  };
};

/** A GPU's trust fields: simulated (the edge's or the verification's word), verification and why. */
const gpuTrust = (
  uuid: string,
  simulated: boolean,
  row: VerificationRow | undefined,
  failures: Measurements['challengeFailures'],
): Pick<GpuInput, 'simulated' | 'verification' | 'verificationNote'> => {
  const { verification, note } = gpuTrustOf(uuid, row, failures);
  return { simulated: simulated || verification === 'simulated', verification, verificationNote: note };
};

/** The snapshot the core schedules against, from discovery's candidates (all their GPUs are free). */
export const snapshotInput = (
  candidates: readonly CandidateProvider[],
  gpuClasses: readonly string[],
  /** GPUs held by rounds in flight (GPU uuid → job id), which discovery may still offer. */
  held: ReadonlyMap<string, string> = new Map(),
  jobId = '',
  /** Most free GPUs a provider may give this job (its CPU/memory fit only so many ranks); default all. */
  gpuCap: (c: CandidateProvider) => number = () => Infinity,
  /** The measurements of these candidates; default none (reference figures, defaults, own sites). */
  view: MeasuredView = UNMEASURED,
): ClusterSnapshotInput => {
  const { profiles, coordinates } = view.measurements;
  const live = <T extends { readonly expiresAtMs: number }>(row: T | undefined): T | undefined =>
    row !== undefined && row.expiresAtMs > view.atMs ? row : undefined;
  const siteOf = (providerId: string): string => live(coordinates.get(providerId))?.siteId ?? providerId;
  // Nothing reports a NIC's speed; the default caps every link of a host (network.ts), so a host
  // measured carrying more than it (a 200 Gbit/s fabric) gets its fastest measured direct transfer
  // instead — else no min_bandwidth above the default could ever be met, however measured.
  const nicOf = new Map<string, number>();
  for (const l of view.measurements.links) {
    if (l.throughputBps === null || l.relayed || l.expiresAtMs <= view.atMs) continue;
    for (const h of [l.a, l.b]) nicOf.set(h, Math.max(nicOf.get(h) ?? 0, l.throughputBps));
  }
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
    const profile = live(profiles.get(c.providerId));
    const coordinate = live(coordinates.get(c.providerId));
    const verification = view.measurements.verification.get(c.providerId);
    const simulated = c.simulated || profile?.simulated === true;
    const host: HostInput = {
      id: c.providerId,
      siteId: siteOf(c.providerId),
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
        ...gpuFigures(g, profile),
        reservedBy: heldByOther(g.uuid) ? (held.get(g.uuid) ?? null) : null,
        ...gpuTrust(g.uuid, simulated, verification, view.measurements.challengeFailures),
      })),
      intraHost: intraHostLink(c.gpus, profile),
      nicBandwidthBps: Math.max(DEFAULT_NETWORK.nicBandwidthBps, nicOf.get(c.providerId) ?? 0),
      coordinates:
        coordinate === undefined ? null : { x: coordinate.x, y: coordinate.y, height: coordinate.height },
      coordinatesError: coordinate?.error ?? null,
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
        reliability: view.measurements.reliability.get(c.providerId)?.score ?? DEFAULT_RELIABILITY,
      },
      hosts: [host],
    };
  });
  return { providers, network: networkOf(candidates, siteOf, view) };
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
