import type { StepTimePrediction } from '../model/placement';
import type { PlacementStrategy } from '../model/request';
import type { Status } from '../model/status';
import type {
  ClusterSnapshot,
  CompiledGpu,
  CompiledHost,
  CompiledProvider,
} from '../snapshot/cluster-snapshot';
import { type GangNetwork, gangNetwork, predictStepTime } from '../objective/step-time';
import type { RequestContext, ScoredHost } from '../framework/context';

/** A host that can serve the request now: eligible, with at least one free eligible GPU. */
export interface PoolHost extends ScoredHost {
  readonly hostIndex: number;
  readonly providerIndex: number;
  readonly siteIndex: number;
  readonly nicBandwidthBps: number;
  /** Its provider's reliability (0 … 1): breaks ties before the seeded key. */
  readonly reliability: number;
  /** Seeded tie-break key. */
  readonly tie: number;
  /** Weighted, normalized score, 0–100. */
  readonly score: number;
}

export interface Pool {
  /** Grouped by site. */
  readonly hosts: readonly PoolHost[];
  readonly usableGpus: number;
  /** Usable GPUs left out because their host has fewer than `minUsable` of them. */
  readonly gpusOnSmallHosts: number;
  /** Fewest usable GPUs a host needs to be in the pool (a node's minimum, or the whole gang). */
  readonly minUsable: number;
  /** False when only a sample of the usable hosts was taken (large clusters). */
  readonly complete: boolean;
}

export interface AssemblyOptions {
  readonly seed: number;
  /** Step times within this relative distance count as equal, so price and score decide. */
  readonly stepTimeTolerance: number;
  /** Partial site sets kept per step of the cross-site search. */
  readonly beamWidth: number;
  /** GPU speed tiers searched (each a lower bound on the slowest chosen GPU). */
  readonly maxTiers: number;
  /** Gangs returned besides the best, for the ensemble's backtracking. */
  readonly alternatives: number;
}

export interface AssemblyContext extends RequestContext {
  readonly snapshot: ClusterSnapshot;
  readonly pool: Pool;
  readonly options: AssemblyOptions;
  /** GPUs this job already holds per provider index (earlier allocations of its ensemble). */
  readonly providerUsed: ReadonlyMap<number, number>;
}

/** A complete gang: distinct hosts and how many GPUs each gives (its fastest usable ones). */
export interface CandidateGang {
  readonly members: readonly PoolHost[];
  readonly counts: readonly number[];
  readonly gpuCount: number;
  readonly prediction: StepTimePrediction;
  readonly network: GangNetwork;
  readonly pricePerHourMinor: number;
  /** GPU-weighted mean of the members' scores. */
  readonly score: number;
  /** GPU-weighted mean of the members' providers' reliability. */
  readonly reliability: number;
  readonly tie: number;
  /** The order gangs are compared in (lexicographic, smaller is better). */
  readonly key: readonly number[];
}

export interface AssemblyResult {
  /** Best first; empty when no gang exists. */
  readonly gangs: readonly CandidateGang[];
  /** Why no gang exists (null on success). */
  readonly failure: Status | null;
}

/** A gang as the gang filters see it. */
export interface GangView {
  readonly nodes: readonly {
    readonly host: CompiledHost;
    readonly provider: CompiledProvider;
    readonly gpus: readonly CompiledGpu[];
  }[];
  readonly gpuCount: number;
  readonly network: GangNetwork;
}

/** Step times bucketed on a log scale, so that "within the tolerance" is a total order. */
const stepBucket = (stepUs: number, tolerance: number): number =>
  tolerance > 0 ? Math.floor(Math.log(Math.max(stepUs, 1e-9)) / Math.log1p(tolerance)) : stepUs;

/**
 * The comparison order of gangs per placement strategy:
 * - pack: fastest predicted step (within the tolerance), then cheapest, then best score, fewest nodes;
 * - spread: most nodes, then as pack;
 * - any: cheapest, then as pack.
 * Among gangs equal on all of that the more reliable providers win; the seeded tie key comes last.
 */
export const gangKey = (
  placement: PlacementStrategy,
  tolerance: number,
  stepUs: number,
  price: number,
  score: number,
  nodes: number,
  reliability: number,
  tie: number,
): number[] => {
  const bucket = stepBucket(stepUs, tolerance);
  switch (placement) {
    case 'pack':
      return [bucket, price, -score, nodes, -reliability, tie];
    case 'spread':
      return [-nodes, bucket, price, -score, -reliability, tie];
    case 'any':
      return [price, bucket, -score, nodes, -reliability, tie];
    default: {
      const never: never = placement;
      return never;
    }
  }
};

/** Hosts otherwise equal: the more reliable provider first, then the seeded key. */
export const tieOrder = (a: PoolHost, b: PoolHost): number => b.reliability - a.reliability || a.tie - b.tie;

export const compareKeys = (a: readonly number[], b: readonly number[]): number => {
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return 0;
};

/** Evaluates hosts + counts: the objective, price, score and comparison key. */
export const evaluateGang = (
  ctx: AssemblyContext,
  members: readonly PoolHost[],
  counts: readonly number[],
): CandidateGang => {
  let slowest = Infinity;
  let price = 0;
  let weighted = 0;
  let gpuCount = 0;
  let reliable = 0;
  let tie = 0;
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    const n = counts[i]!;
    slowest = Math.min(slowest, m.speeds[n - 1]!);
    for (let j = 0; j < n; j++) price += m.prices[j]!;
    weighted += m.score * n;
    reliable += m.reliability * n;
    gpuCount += n;
    tie = (tie + m.tie) >>> 0;
  }
  const network = gangNetwork(
    ctx.inventory,
    members.map((m) => m.hostIndex),
  );
  const prediction = predictStepTime(
    ctx.inventory,
    ctx.workload,
    members.map((m, i) => ({ host: m.hostIndex, gpus: counts[i]! })),
    slowest,
    network,
  );
  const score = gpuCount === 0 ? 0 : weighted / gpuCount;
  const reliability = gpuCount === 0 ? 0 : reliable / gpuCount;
  return {
    members,
    counts,
    gpuCount,
    prediction,
    network,
    pricePerHourMinor: price,
    score,
    reliability,
    tie,
    key: gangKey(
      ctx.request.placement,
      ctx.options.stepTimeTolerance,
      prediction.stepUs,
      price,
      score,
      members.length,
      reliability,
      tie,
    ),
  };
};
