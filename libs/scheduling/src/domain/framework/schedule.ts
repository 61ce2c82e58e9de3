import type {
  AssemblyContext,
  AssemblyOptions,
  AssemblyResult,
  CandidateGang,
  GangView,
} from '../assembly/gang';
import { shapeLimits } from '../assembly/shape';
import type { AllocationExplanation, PlacementExplanation } from '../model/explanation';
import type { AllocationPlacement, Placement } from '../model/placement';
import {
  DEFAULT_WORKLOAD,
  type EdgeConstraint,
  type EnsembleRequest,
  type GangRequest,
} from '../model/request';
import { pluginError, type Status, type StatusCode, unresolvable } from '../model/status';
import { applyPlacement } from '../snapshot/apply-placement';
import { type ClusterSnapshot, type Inventory, memoized } from '../snapshot/cluster-snapshot';
import { hostLink, meetsBounds } from '../snapshot/network';
import type { RequestContext } from './context';
import { type Eligibility, eligibility, registryId } from './eligibility';
import type { PluginRegistry } from './plugin';
import { buildPool, type PoolSample } from './pool';
import { tieKey } from '../random/prng';
import { toAllocationPlacement } from './to-placement';
import { defaultRegistry } from './registry';
import { explainAllocation } from './explain-placement';

export interface ScheduleOptions {
  /** Breaks ties between equally good choices; the same (snapshot, request, seed) gives the same result. */
  readonly seed: number;
  /** Default: `defaultRegistry`. */
  readonly registry?: PluginRegistry;
  /** Predicted step times within this relative distance count as equal (then price decides). Default 0.02. */
  readonly stepTimeTolerance?: number;
  /** Partial site sets kept per step of the cross-site beam search. Default 6. */
  readonly beamWidth?: number;
  /** GPU speed tiers searched per model. Default 4. */
  readonly maxTiers?: number;
  /** Other gangs kept per allocation for an ensemble's backtracking. Default 2. */
  readonly alternatives?: number;
  /** Most gangs tried over all allocations of an ensemble before giving up. Default 32. */
  readonly maxEnsembleAttempts?: number;
  /**
   * Large clusters: search a sample of whole sites holding at least this many eligible hosts (and
   * 4× the gang's GPUs) instead of every host, as the Kubernetes scheduler scores a share of its
   * nodes. The sites rotate with the seed; if the sample holds no gang, every host is searched.
   * Default 1000; `Infinity` searches every host always.
   */
  readonly minHostsToScore?: number;
  /** The sample's share of eligible hosts, percent. Default: Kubernetes' adaptive 50 − hosts/125, at least 5. */
  readonly percentageOfHostsToScore?: number;
  /**
   * Attach an explanation to a success (`ScheduleSuccess.explanation`): every figure the objective
   * used with its source, and the best gangs not chosen with why they lost. Costs one more gang
   * search per allocation with interconnect requirements (a search without them, for the gangs they
   * ruled out). Default false: nothing of it is computed.
   */
  readonly explain?: boolean;
}

/** One reason a request was not placed: a plugin, its reason constant, words, and how many GPUs it ruled out. */
export interface Reason {
  readonly plugin: string;
  readonly reason: string;
  readonly message: string;
  /** Free GPUs this filter rejected first; null for reasons about the gang as a whole. */
  readonly gpus: number | null;
}

export interface ScheduleSuccess {
  readonly code: 'Success';
  readonly placement: Placement;
  /** Only with `explain: true`. */
  readonly explanation?: PlacementExplanation;
}

export interface ScheduleFailure {
  readonly code: Exclude<StatusCode, 'Success'>;
  /** The allocation that could not be placed; null for a malformed ensemble. */
  readonly allocation: string | null;
  /** One sentence a person can act on: "8 GPUs asked; 6 match ≥ 40 GB, in subnet 'ai'; …". */
  readonly message: string;
  /** The deciding reason first, then every filter that ruled GPUs out, with counts. */
  readonly reasons: readonly Reason[];
}

export type ScheduleResult = ScheduleSuccess | ScheduleFailure;

export const ENSEMBLE = 'ensemble';
export const EnsembleReason = {
  InvalidEnsemble: 'InvalidEnsemble',
  SearchLimit: 'SearchLimit',
} as const;
export const FRAMEWORK = 'framework';
export const FrameworkReason = {
  GpusBusy: 'GpusBusy',
  EdgeConstraintUnsatisfied: 'EdgeConstraintUnsatisfied',
  PluginFailed: 'PluginFailed',
} as const;

interface ResolvedOptions extends AssemblyOptions {
  readonly explain: boolean;
  readonly maxEnsembleAttempts: number;
  readonly minHostsToScore: number;
  readonly percentageOfHostsToScore: number | null;
}

const resolveOptions = (o: ScheduleOptions): ResolvedOptions => ({
  seed: o.seed >>> 0,
  stepTimeTolerance: o.stepTimeTolerance ?? 0.02,
  beamWidth: o.beamWidth ?? 6,
  maxTiers: o.maxTiers ?? 4,
  alternatives: o.alternatives ?? 2,
  explain: o.explain ?? false,
  maxEnsembleAttempts: o.maxEnsembleAttempts ?? 32,
  minHostsToScore: o.minHostsToScore ?? 1000,
  percentageOfHostsToScore: o.percentageOfHostsToScore ?? null,
});

const samplePlan = (elig: Eligibility, gang: GangRequest, o: ResolvedOptions): PoolSample | null => {
  const eligible = elig.hosts.length;
  if (!(eligible > o.minHostsToScore)) return null;
  const percent = o.percentageOfHostsToScore ?? Math.max(5, 50 - eligible / 125);
  return {
    offset: tieKey(o.seed, 0x5eed),
    minHosts: Math.max(o.minHostsToScore, Math.ceil((percent / 100) * eligible)),
    minGpus: 4 * gang.gpuCount,
  };
};

const failure = (
  code: ScheduleFailure['code'],
  allocation: string | null,
  message: string,
  reasons: readonly Reason[],
): ScheduleFailure => ({ code, allocation, message, reasons });

const reasonOf = (s: Status, gpus: number | null = null): Reason => ({
  plugin: s.plugin,
  reason: s.reason,
  message: s.message,
  gpus,
});

const validateEnsemble = (request: EnsembleRequest): string | null => {
  if (request.allocations.length === 0) return 'the ensemble has no allocations';
  const names = new Set<string>();
  for (const a of request.allocations) {
    if (names.has(a.name)) return `allocation '${a.name}' appears twice`;
    names.add(a.name);
  }
  for (const e of request.edgeConstraints) {
    const [a, b] = e.between;
    if (a === b) return `edge constraint between '${a}' and itself`;
    for (const n of [a, b]) if (!names.has(n)) return `edge constraint names unknown allocation '${n}'`;
  }
  return null;
};

interface Placed {
  readonly gang: CandidateGang;
  readonly allocation: AllocationPlacement;
  /** With `explain`: what the allocation's search saw, to explain it once the ensemble is placed. */
  readonly search?: SearchSeen;
}

/** References to what one allocation's search used and ranked (nothing copied). */
interface SearchSeen {
  readonly ctx: RequestContext;
  readonly snapshot: ClusterSnapshot;
  readonly elig: Eligibility;
  readonly allow: ((h: number) => boolean) | null;
  readonly used: ReadonlyMap<number, number>;
  readonly minUsable: number;
  readonly rivals: readonly CandidateGang[];
}

/**
 * Places an ensemble as a whole or not at all. Pure: reads the snapshot, returns a placement (apply
 * it with `applyPlacement`) or a failure that explains itself. Allocations are placed largest
 * first; when one cannot be placed next to the ones before it, earlier ones try their next-best
 * gangs (bounded by `maxEnsembleAttempts`).
 */
export const schedule = (
  snapshot: ClusterSnapshot,
  request: EnsembleRequest,
  options: ScheduleOptions,
): ScheduleResult => {
  const registry = options.registry ?? defaultRegistry;
  const opts = resolveOptions(options);
  const invalid = validateEnsemble(request);
  if (invalid !== null) {
    const s = unresolvable(ENSEMBLE, EnsembleReason.InvalidEnsemble, invalid);
    return failure(s.code as ScheduleFailure['code'], null, invalid, [reasonOf(s)]);
  }
  const order = [...request.allocations].sort(
    (a, b) => b.gpuCount - a.gpuCount || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const single = order.length === 1;
  let attempts = 0;
  let worst: { depth: number; result: ScheduleFailure } | null = null;
  const placed = new Map<string, Placed>();

  const dfs = (depth: number, current: ClusterSnapshot, used: ReadonlyMap<number, number>): boolean => {
    if (depth === order.length) return true;
    const gang = order[depth]!;
    const outcome = placeAllocation(current, request, gang, placed, used, registry, {
      ...opts,
      alternatives: single ? 0 : opts.alternatives,
    });
    if ('code' in outcome) {
      if (worst === null || depth > worst.depth) worst = { depth, result: outcome };
      return false;
    }
    const last = depth === order.length - 1;
    for (const candidate of outcome) {
      if (++attempts > opts.maxEnsembleAttempts) return false;
      placed.set(gang.name, candidate);
      if (last) return true;
      const next = applyPlacement(current, { id: request.id, allocations: [candidate.allocation] });
      const nextUsed = new Map(used);
      candidate.gang.members.forEach((m, i) =>
        nextUsed.set(m.providerIndex, (nextUsed.get(m.providerIndex) ?? 0) + candidate.gang.counts[i]!),
      );
      if (dfs(depth + 1, next, nextUsed)) return true;
      placed.delete(gang.name);
    }
    return false;
  };

  if (dfs(0, snapshot, new Map())) {
    const chosen = request.allocations.map((a) => placed.get(a.name)!);
    const placement = { id: request.id, allocations: chosen.map((p) => p.allocation) };
    if (!opts.explain) return { code: 'Success', placement };
    return {
      code: 'Success',
      placement,
      explanation: {
        id: request.id,
        allocations: chosen.map((p) => explainPlaced(p, registry, opts)),
      },
    };
  }
  const found = worst as { depth: number; result: ScheduleFailure } | null;
  if (found !== null) {
    if (single) return found.result;
    return { ...found.result, message: `allocation '${found.result.allocation}': ${found.result.message}` };
  }
  const s = unresolvable(
    ENSEMBLE,
    EnsembleReason.SearchLimit,
    `no combination found within ${opts.maxEnsembleAttempts} tries`,
  );
  return failure('Unschedulable', null, s.message, [reasonOf(s)]);
};

/** Convenience: one gang as a one-allocation ensemble. */
export const scheduleGang = (
  snapshot: ClusterSnapshot,
  id: string,
  gang: GangRequest,
  options: ScheduleOptions,
): ScheduleResult => schedule(snapshot, { id, allocations: [gang], edgeConstraints: [] }, options);

const guard = <T>(plugin: string, f: () => T): T | Status => {
  try {
    return f();
  } catch (e) {
    return pluginError(
      plugin,
      FrameworkReason.PluginFailed,
      `${plugin} threw: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
};
const isStatus = (x: unknown): x is Status =>
  typeof x === 'object' && x !== null && 'code' in x && 'plugin' in x && 'reason' in x;

const linkOk = (inv: Inventory, a: number, b: number, e: EdgeConstraint): boolean => {
  if (a === b) return true;
  return meetsBounds(inv, hostLink(inv, a, b), e.minBandwidthBps, e.maxRttUs);
};

/** Hosts allowed by edge constraints towards allocations already placed; null when none apply. */
const edgeFilter = (
  inv: Inventory,
  request: EnsembleRequest,
  gang: GangRequest,
  placed: ReadonlyMap<string, Placed>,
): ((h: number) => boolean) | null => {
  const rules = request.edgeConstraints.flatMap((e) => {
    const other =
      e.between[0] === gang.name ? e.between[1] : e.between[1] === gang.name ? e.between[0] : null;
    const p = other === null ? undefined : placed.get(other);
    return p === undefined ? [] : [{ e, hosts: p.gang.members.map((m) => m.hostIndex) }];
  });
  if (rules.length === 0) return null;
  return (h) => rules.every(({ e, hosts }) => hosts.every((o) => linkOk(inv, h, o, e)));
};

const allFree = (inv: Inventory): ClusterSnapshot =>
  memoized(inv, 'all-free', () => ({
    inventory: inv,
    freeMask: Uint32Array.from(
      inv.hosts,
      (h) => (h.gpuCount === 32 ? 0xffffffff : (1 << h.gpuCount) - 1) >>> 0,
    ),
    owners: inv.hosts.map(() => null),
    version: -1,
  }));

const placeAllocation = (
  snapshot: ClusterSnapshot,
  request: EnsembleRequest,
  gang: GangRequest,
  placed: ReadonlyMap<string, Placed>,
  used: ReadonlyMap<number, number>,
  registry: PluginRegistry,
  opts: ResolvedOptions,
): Placed[] | ScheduleFailure => {
  const inv = snapshot.inventory;
  const ctx: RequestContext = { request: gang, inventory: inv, workload: gang.workload ?? DEFAULT_WORKLOAD };
  for (const pf of registry.preFilters) {
    const st = guard(pf.name, () => pf.preFilter({ ...ctx, snapshot }));
    if (st.code !== 'Success') return failure(st.code, gang.name, st.message, [reasonOf(st)]);
  }
  const elig = eligibility(ctx, registry);
  if (elig.error !== null) return failure('Error', gang.name, elig.error.message, [reasonOf(elig.error)]);
  const allow = edgeFilter(inv, request, gang, placed);
  // A host with fewer usable GPUs than a node's minimum (or than the whole gang, when it must sit
  // on one node) can take no part: leave it out of the pool.
  const limits = shapeLimits(gang);
  const singleNode = limits.maxNodes === 1 || limits.total < 2 * limits.perNodeMin;
  const minUsable = singleNode ? limits.total : limits.perNodeMin;
  const assemble = (sample: PoolSample | null) => {
    const pool = buildPool(ctx, snapshot, elig, registry.scores, opts.seed, allow, sample, minUsable);
    const actx: AssemblyContext = { ...ctx, snapshot, pool, options: opts, providerUsed: used };
    return {
      pool,
      result: guard<AssemblyResult>(registry.assembler.name, () => registry.assembler.assemble(actx)),
    };
  };
  const sampled = assemble(samplePlan(elig, gang, opts));
  const { result } =
    !sampled.pool.complete && !isStatus(sampled.result) && sampled.result.gangs.length === 0
      ? assemble(null)
      : sampled;
  if (isStatus(result)) return failure('Error', gang.name, result.message, [reasonOf(result)]);
  if (result.gangs.length === 0) {
    const why =
      result.failure ??
      pluginError(registry.assembler.name, 'NoReason', 'assembler found no gang and gave no reason');
    const staticCheck = placed.size === 0 && used.size === 0 && allow === null;
    return explain(ctx, snapshot, elig, why, registry, opts, staticCheck, allow);
  }
  const out: Placed[] = [];
  for (const g of result.gangs.slice(0, opts.alternatives + 1)) {
    const view: GangView = {
      nodes: g.members.map((m, i) => ({
        host: m.host,
        provider: m.provider,
        gpus: m.gpus.slice(0, g.counts[i]),
      })),
      gpuCount: g.gpuCount,
      network: g.network,
    };
    for (const gf of registry.gangFilters) {
      const st = guard(gf.name, () => gf.filterGang(ctx, view));
      if (st.code !== 'Success') {
        return failure('Error', gang.name, `${gf.name} rejected the assembled gang: ${st.message}`, [
          reasonOf({ ...st, code: 'Error' }),
        ]);
      }
    }
    out.push({
      gang: g,
      allocation: toAllocationPlacement(inv, ctx.workload, gang.name, g.members, g.counts, limits.step),
      ...(opts.explain
        ? { search: { ctx, snapshot, elig, allow, used, minUsable, rivals: result.gangs } }
        : {}),
    });
  }
  return out;
};

const NO_INTERCONNECT = { minBandwidthBps: null, maxRttUs: null, sameSite: false } as const;

/**
 * Explains a placed allocation. When it has interconnect requirements, the gangs they ruled out
 * were never built: one search over the same pool without them finds the best of those.
 */
const explainPlaced = (p: Placed, registry: PluginRegistry, opts: ResolvedOptions): AllocationExplanation => {
  const seen = p.search!;
  const ic = seen.ctx.request.interconnect;
  let unconstrained: readonly CandidateGang[] = [];
  if (ic.sameSite || ic.maxRttUs !== null || ic.minBandwidthBps !== null) {
    const ctx: RequestContext = {
      ...seen.ctx,
      request: { ...seen.ctx.request, interconnect: NO_INTERCONNECT },
    };
    const pool = buildPool(
      ctx,
      seen.snapshot,
      seen.elig,
      registry.scores,
      opts.seed,
      seen.allow,
      null,
      seen.minUsable,
    );
    const r = guard<AssemblyResult>(registry.assembler.name, () =>
      registry.assembler.assemble({
        ...ctx,
        snapshot: seen.snapshot,
        pool,
        options: opts,
        providerUsed: seen.used,
      }),
    );
    // A failing assembler explains nothing more; the placement stands as found.
    if (!isStatus(r)) unconstrained = r.gangs;
  }
  return explainAllocation({
    ctx: seen.ctx,
    placement: p.allocation,
    chosen: p.gang,
    rivals: seen.rivals,
    unconstrained,
    stepTimeTolerance: opts.stepTimeTolerance,
  });
};

/** How many distinct rejections a failure's sentence quotes (the reasons list has every filter). */
const MAX_REJECTIONS_NAMED = 3;

/**
 * Turns an assembler's failure into a sentence and a list of reasons with counts, and decides
 * whether waiting can help: when even a cluster with every GPU free could not hold the gang, the
 * result is `UnschedulableAndUnresolvable`.
 */
const explain = (
  ctx: RequestContext,
  snapshot: ClusterSnapshot,
  elig: Eligibility,
  why: Status,
  registry: PluginRegistry,
  opts: AssemblyOptions,
  staticCheck: boolean,
  allow: ((h: number) => boolean) | null,
): ScheduleFailure => {
  const inv = ctx.inventory;
  const counts = registry.filters.map(() => 0);
  // Free GPUs rejected by each distinct status of a filter that names figures: "2 by subnet-standing
  // (no standing reported), 2 by subnet-standing (below-minimum-stake …)" rather than one of them.
  const quoted = new Map<string, { readonly sample: Status; n: number }>();
  let busy = 0;
  let edgeBlocked = 0;
  let usable = 0;
  for (const gpu of inv.gpus) {
    const free = (snapshot.freeMask[gpu.hostIndex]! >>> gpu.local) & 1;
    const by = elig.rejectedBy[gpu.index]!;
    if (free === 0) {
      if (by === 0) busy++;
    } else if (by > 0) {
      counts[by - 1]!++;
      const st = elig.rejectedWith[gpu.index];
      if (st !== undefined && registry.filters[by - 1]!.namesFigures === true) {
        const key = `${st.plugin}\u0000${st.message}`;
        const seen = quoted.get(key);
        if (seen === undefined) quoted.set(key, { sample: st, n: 1 });
        else seen.n++;
      }
    } else if (allow !== null && !allow(gpu.hostIndex)) edgeBlocked++;
    else usable++;
  }
  const asked = ctx.request.gpuCount;
  // GPU requirements read first ("≥ 40 GB"), then where ("in subnet 'ai'").
  const phrase = [
    ...registry.filters.filter((f) => f.gpuFilter !== undefined),
    ...registry.filters.filter((f) => f.gpuFilter === undefined),
  ]
    .map((f) => f.describe(ctx))
    .filter((d) => d !== null)
    .join(', ');
  const more = [
    busy > 0 ? `${busy} more are busy` : null,
    edgeBlocked > 0 ? `${edgeBlocked} more fail an edge constraint` : null,
  ]
    .filter((m) => m !== null)
    .join(', ');
  const matches = `${usable} match${phrase === '' ? '' : ` ${phrase}`}${more === '' ? '' : ` (${more})`}`;
  // Filters whose reasons carry the GPU's own figure (`namesFigures`) are quoted: "GPU has 55
  // TFLOPS fp16 (measured), below 100" says which figure stood in the way; the phrase only the rule.
  const rejected = [...quoted.values()]
    .sort((x, y) => y.n - x.n)
    .slice(0, MAX_REJECTIONS_NAMED)
    .map(({ sample, n }) => `${n} by ${sample.plugin} (${sample.message})`)
    .join(', ');
  const left = rejected === '' ? '' : `; free GPUs left out: ${rejected}`;
  const message =
    why.reason === 'TooFewGpus'
      ? `${asked} GPUs asked; only ${matches}${left}`
      : `${asked} GPUs asked; ${matches}; ${why.message}${left}`;
  const reasons: Reason[] = [reasonOf(why)];
  elig.samples.forEach((sample, i) => {
    if (counts[i]! > 0 && sample !== null) reasons.push(reasonOf(sample, counts[i]));
  });
  if (busy > 0)
    reasons.push({
      plugin: FRAMEWORK,
      reason: FrameworkReason.GpusBusy,
      message: 'matching GPUs held by other jobs',
      gpus: busy,
    });
  if (edgeBlocked > 0) {
    reasons.push({
      plugin: FRAMEWORK,
      reason: FrameworkReason.EdgeConstraintUnsatisfied,
      message: 'too far from the nodes of a linked allocation',
      gpus: edgeBlocked,
    });
  }
  let code: ScheduleFailure['code'] = why.code === 'Error' ? 'Error' : 'Unschedulable';
  if (code === 'Unschedulable' && staticCheck && !fitsWhenAllFree(ctx, elig, registry, opts)) {
    code = 'UnschedulableAndUnresolvable';
  }
  return failure(code, ctx.request.name, message, reasons);
};

/** Whether the gang would fit if every GPU were free (memoized per request shape). */
const fitsWhenAllFree = (
  ctx: RequestContext,
  elig: Eligibility,
  registry: PluginRegistry,
  opts: AssemblyOptions,
): boolean =>
  memoized(ctx.inventory, `fits-all-free:${registryId(registry)}:${JSON.stringify(ctx.request)}`, () => {
    const snapshot = allFree(ctx.inventory);
    const pool = buildPool(ctx, snapshot, elig, registry.scores, 0, null);
    const actx: AssemblyContext = {
      ...ctx,
      snapshot,
      pool,
      options: { ...opts, alternatives: 0 },
      providerUsed: new Map(),
    };
    const r = guard<AssemblyResult>(registry.assembler.name, () => registry.assembler.assemble(actx));
    return !isStatus(r) && r.gangs.length > 0;
  });
