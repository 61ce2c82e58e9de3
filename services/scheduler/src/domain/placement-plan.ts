import type { FindCandidates, QueryRequest } from '@gpunet/contracts';
import type { Allocation, LocationMatch as SpecLocationMatch, NormalizedSpec } from '@gpunet/ensemble-spec';
import {
  type EdgeConstraint,
  type GangRequest,
  gangRequest,
  type LocationMatch,
  type LocationRequirement,
  type Precision,
  PRECISIONS,
} from '@gpunet/scheduling';
import type { CoreReason } from './job-placement.decider';
import { candidateRequirement, classLabel, type FundedJob, trustOf } from './placement-input';

/*
 * What the scheduler asks discovery and the placement core for one job (pure). A v2 job carries
 * its normalized spec: every allocation becomes a gang (the real GPU requirement, its shape in
 * whole ranks, placement preference, interconnect, location, pinned provider) and a candidate
 * query (GPU requirement, CPU/memory a provider needs for the fewest ranks a node may run, image,
 * duration, location). A v1 job (no spec) keeps the terms-only request: `gpus` GPUs of one of
 * `gpuClasses`, one GPU per rank, no CPU, memory or image.
 */

/** Discovery's candidate query without the paging and exclusion the engine adds. */
export type CandidateQuery = Omit<
  QueryRequest<typeof FindCandidates>,
  'excludeProviders' | 'cursor' | 'limit' | 'at'
>;

/** One allocation, ready for discovery, the core and the edges. */
export interface AllocationPlan {
  readonly gang: GangRequest;
  readonly query: CandidateQuery;
  /** What each rank needs besides GPUs: a node's reservation asks ranks × these. */
  readonly perRank: { readonly cpuMillicores: number; readonly memoryBytes: number };
  readonly image: string | null;
  readonly maxDurationMs: number;
}

export interface PlacementPlan {
  readonly allocations: readonly AllocationPlan[];
  readonly edgeConstraints: readonly EdgeConstraint[];
  /**
   * How GPUs are named in the snapshot: by the job class they match (v1 terms), or by the words
   * of the model they report (spec; the allocations' models match by word sequence).
   */
  readonly gpuClasses: readonly string[];
}

/** The spec asks for something the scheduler cannot place (ever, as written). */
export interface PlanRejection {
  readonly message: string;
  readonly allocation: string | null;
  readonly reasons: readonly CoreReason[];
}

export type PlanResult =
  | { readonly ok: true; readonly plan: PlacementPlan }
  | { readonly ok: false; readonly rejection: PlanRejection };

/** The plugin name the scheduler's own rejections carry (next to the core's plugins). */
export const SPEC_PLAN = 'spec-plan';
export const SpecPlanReason = {
  CpuOnlyAllocation: 'CpuOnlyAllocation',
  CoLocatedAllocations: 'CoLocatedAllocations',
  ConflictingLocation: 'ConflictingLocation',
} as const;

/** Discovery's query limit on `minGpusPerProvider`. */
const MAX_MIN_GPUS_PER_PROVIDER = 64;

const reject = (
  allocation: string | null,
  reason: keyof typeof SpecPlanReason,
  message: string,
): PlanResult => ({
  ok: false,
  rejection: { message, allocation, reasons: [{ plugin: SPEC_PLAN, reason, message, gpus: null }] },
});

const priceCap = (job: FundedJob): number => Number(job.terms.maxPricePerGpuHour);

const includeSimulated = (job: FundedJob): boolean => job.terms.trust.simulatedGpus === 'allowed';

/** The shape of a subnet name in an edge's policy (`subnets:`), which its reservation check compares. */
const EDGE_SUBNET = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * The job's subnet as the edges' own policies name subnets, or null when it cannot be one of them.
 * Discovery's `subnet` filter and the edge's reservation check (`SUBNET_NOT_JOINED`) test the same
 * list, the edge's declared `subnets`: asked with it, discovery offers only edges whose policy
 * accepts the job, and each edge still checks its own policy when it reserves. A subnet id no
 * policy can name (upper case, longer than 63) is left to the edge (which then checks nothing):
 * filtering on it would offer no edge at all.
 */
export const edgeSubnetOf = (job: Pick<FundedJob, 'subnetId'>): string | null =>
  EDGE_SUBNET.test(job.subnetId) ? job.subnetId : null;

/** The terms-only plan of a v1 job (no spec): unchanged from before the spec was carried. */
export const termsPlan = (job: FundedJob): PlacementPlan => {
  const models = [...new Set(job.gpuClasses.map(classLabel))];
  return {
    allocations: [
      {
        gang: gangRequest({
          name: 'main',
          gpuCount: job.gpus,
          models,
          maxNodes: job.gpus,
          maxPricePerGpuHourMinor: priceCap(job),
          trust: trustOf(job),
        }),
        query: {
          gpu: candidateRequirement(job),
          minGpusPerProvider: 1,
          minCpuMillicores: 0,
          minMemoryBytes: 0,
          cpuArchitecture: null,
          subnet: edgeSubnetOf(job),
          image: null,
          maxDurationMs: job.maxDurationSeconds * 1000,
          maxPrice: { asset: job.asset, perGpuHourMinor: job.terms.maxPricePerGpuHour },
          location: null,
          includeSimulated: includeSimulated(job),
        },
        perRank: { cpuMillicores: 0, memoryBytes: 0 },
        image: null,
        maxDurationMs: job.maxDurationSeconds * 1000,
      },
    ],
    edgeConstraints: [],
    gpuClasses: job.gpuClasses,
  };
};

const FIELDS = ['continent', 'country', 'city', 'asn', 'isp'] as const;

const toCore = (m: SpecLocationMatch): LocationMatch => {
  const out: Record<string, unknown> = {};
  for (const f of FIELDS) if (m[f] !== null) out[f] = m[f];
  return out;
};

/** Both entries at once, or null when they contradict each other (`DE` and `FR`). */
const both = (a: LocationMatch, b: LocationMatch): LocationMatch | null => {
  const out: Record<string, unknown> = { ...a };
  for (const f of FIELDS) {
    const v = b[f];
    if (v === undefined || v === null) continue;
    if (out[f] !== undefined && out[f] !== v) return null;
    out[f] = v;
  }
  return out;
};

/**
 * The allocation's location and its node's, both required: rejects add up; "one of A" and "one of
 * B" is "one of every compatible pair". Null when no place can satisfy both.
 */
const intersect = (a: LocationRequirement, b: LocationRequirement): LocationRequirement | null => {
  const reject = [...a.reject, ...b.reject];
  if (a.accept.length === 0 || b.accept.length === 0) return { accept: [...a.accept, ...b.accept], reject };
  const accept = a.accept.flatMap((x) => b.accept.flatMap((y) => both(x, y) ?? []));
  return accept.length === 0 ? null : { accept, reject };
};

const coreLocation = (spec: { accept: SpecLocationMatch[]; reject: SpecLocationMatch[] }) => ({
  accept: spec.accept.map(toCore),
  reject: spec.reject.map(toCore),
});

/** One GPU allocation of a spec as a gang and a candidate query. */
export const allocationPlan = (
  job: FundedJob,
  a: Allocation,
  node: { readonly peer: string | null; readonly location: LocationRequirement } | null = null,
): AllocationPlan | PlanResult => {
  const gpus = a.resources.gpus;
  if (gpus === null)
    return reject(
      a.name,
      'CpuOnlyAllocation',
      `allocation '${a.name}' asks for no GPUs: the scheduler places GPU allocations only (CPU-only allocations are not supported yet)`,
    );
  const d = a.distributed;
  // Without `distributed` the allocation is one rank holding every GPU, on one node.
  const gpusPerRank = d === null ? gpus.count : Math.max(1, d.gpusPerRank);
  const ranksPerNode = d === null ? { min: 1, max: 1 } : d.ranksPerNode;
  const gpusPerNode = d?.gpusPerNode ?? {
    min: ranksPerNode.min * gpusPerRank,
    max: ranksPerNode.max * gpusPerRank,
  };
  const own = coreLocation(a.location);
  const location = node === null ? own : intersect(own, node.location);
  if (location === null)
    return reject(
      a.name,
      'ConflictingLocation',
      `allocation '${a.name}': its location and its node's location exclude each other`,
    );
  const gang = gangRequest({
    name: a.name,
    gpuCount: gpus.count,
    vendor: gpus.vendor,
    models: gpus.models,
    minVramBytes: gpus.minVramBytes,
    minComputeCapability: gpus.minComputeCapability,
    amdArchitectures: gpus.amdArchitectures,
    cudaRange: gpus.cuda,
    rocmRange: gpus.rocm,
    // Compared with the snapshot's measured figures (`measured-tflops` and the core's `tflops`).
    minTflops: minTflopsOf(gpus.minTflops),
    mixedModels: gpus.mixedModels,
    gpusPerRank,
    gpusPerNode,
    maxNodes: d === null ? 1 : d.maxNodes,
    placement: d?.placement ?? 'pack',
    interconnect: d?.interconnect ?? { minBandwidthBps: null, maxRttUs: null, sameSite: false },
    maxPricePerGpuHourMinor: priceCap(job),
    location,
    pinnedProvider: node?.peer ?? null,
    trust: trustOf(job),
  });
  const hasLocation = location.accept.length > 0 || location.reject.length > 0;
  // The escrow covers the job's terms: an allocation never runs longer than they pay for.
  const maxDurationMs = Math.min(a.maxDurationMs, job.maxDurationSeconds * 1000);
  return {
    gang,
    query: {
      gpu: gpus,
      minGpusPerProvider: Math.min(MAX_MIN_GPUS_PER_PROVIDER, Math.max(1, gpusPerNode.min)),
      // A provider must hold at least the fewest ranks a node may run.
      minCpuMillicores: a.resources.cpuMillicores * ranksPerNode.min,
      minMemoryBytes: a.resources.ramBytes * ranksPerNode.min,
      cpuArchitecture: a.resources.cpuArchitecture,
      subnet: edgeSubnetOf(job),
      image: a.execution.image,
      maxDurationMs,
      maxPrice: { asset: job.asset, perGpuHourMinor: job.terms.maxPricePerGpuHour },
      location: hasLocation
        ? {
            accept: location.accept.map(specMatch),
            reject: location.reject.map(specMatch),
          }
        : null,
      includeSimulated: includeSimulated(job),
    },
    perRank: { cpuMillicores: a.resources.cpuMillicores, memoryBytes: a.resources.ramBytes },
    image: a.execution.image,
    maxDurationMs,
  };
};

const specMatch = (m: LocationMatch): SpecLocationMatch => ({
  continent: (m.continent ?? null) as SpecLocationMatch['continent'],
  country: m.country ?? null,
  city: m.city ?? null,
  asn: m.asn ?? null,
  isp: m.isp ?? null,
});

/** The spec's per-precision minimums (null: none) as the core's partial record. */
const minTflopsOf = (spec: Readonly<Record<string, number | null>>): Partial<Record<Precision, number>> => {
  const out: Partial<Record<Precision, number>> = {};
  for (const p of PRECISIONS) {
    const v = spec[p];
    if (v !== null && v !== undefined && v > 0) out[p] = v;
  }
  return out;
};

const isPlanResult = (x: AllocationPlan | PlanResult): x is PlanResult => 'ok' in x;

/**
 * The plan for a job: from its spec when it has one, otherwise from its terms. Every allocation is
 * placed together (the core's ensemble search). A spec node that names one allocation pins it
 * (`peer`) and narrows its location; a node that co-locates several allocations on one machine is
 * not supported yet and rejected with that reason, as are CPU-only allocations.
 */
export const planFor = (job: FundedJob, spec: NormalizedSpec | null): PlanResult => {
  if (spec === null) return { ok: true, plan: termsPlan(job) };
  const nodeOf = new Map<string, { peer: string | null; location: LocationRequirement }>();
  const nameOf = new Map<string, string>(); // node or allocation name → allocation name
  for (const a of spec.allocations) nameOf.set(a.name, a.name);
  for (const n of spec.nodes) {
    if (n.allocations.length > 1)
      return reject(
        null,
        'CoLocatedAllocations',
        `node '${n.name}' puts allocations ${n.allocations.map((x) => `'${x}'`).join(', ')} on one machine: co-locating allocations is not supported by the scheduler yet`,
      );
    const only = n.allocations[0];
    if (only === undefined) continue;
    nodeOf.set(only, { peer: n.peer, location: coreLocation(n.location) });
    nameOf.set(n.name, only);
  }
  const allocations: AllocationPlan[] = [];
  for (const a of spec.allocations) {
    const p = allocationPlan(job, a, nodeOf.get(a.name) ?? null);
    if (isPlanResult(p)) return p;
    allocations.push(p);
  }
  // Constraints between two names of one allocation tighten that gang's own interconnect.
  const edgeConstraints: EdgeConstraint[] = [];
  for (const e of spec.edgeConstraints) {
    const x = nameOf.get(e.between[0]);
    const y = nameOf.get(e.between[1]);
    if (x === undefined || y === undefined) continue;
    if (x !== y) {
      edgeConstraints.push({
        between: [x, y],
        maxRttUs: e.maxRttUs,
        minBandwidthBps: e.minBandwidthBps,
      });
      continue;
    }
    const i = allocations.findIndex((p) => p.gang.name === x);
    const p = allocations[i]!;
    const ic = p.gang.interconnect;
    allocations[i] = {
      ...p,
      gang: {
        ...p.gang,
        interconnect: {
          ...ic,
          maxRttUs: minOf(ic.maxRttUs, e.maxRttUs),
          minBandwidthBps: maxOf(ic.minBandwidthBps, e.minBandwidthBps),
        },
      },
    };
  }
  return { ok: true, plan: { allocations, edgeConstraints, gpuClasses: [] } };
};

const minOf = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);
const maxOf = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.max(a, b);
