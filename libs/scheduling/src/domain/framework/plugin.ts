import type { Status } from '../model/status';
import type { CompiledGpu, CompiledHost, CompiledProvider } from '../snapshot/cluster-snapshot';
import type { AssemblyContext, AssemblyResult, GangView } from '../assembly/gang';
import type { PreFilterContext, RequestContext, ScoredHost } from './context';

/**
 * The extension points, after the Kubernetes scheduler framework:
 * pre-filter → filter (host, then GPU) → score → gang assembly → gang filter. Reserve, permit and
 * bind belong to the scheduler service; the core offers `applyPlacement`/`releasePlacement`.
 */

/** Runs once per allocation before anything else: rejects impossible requests early. */
export interface PreFilterPlugin {
  readonly name: string;
  preFilter(ctx: PreFilterContext): Status;
}

export type HostPredicate = (host: CompiledHost, provider: CompiledProvider) => Status;
export type GpuPredicate = (gpu: CompiledGpu, host: CompiledHost, provider: CompiledProvider) => Status;

/**
 * Decides which hosts and GPUs may serve the request. A filter may look at the host (and its
 * provider) or at each GPU, or both. It returns `null` for a request it has nothing to say about
 * (no VRAM minimum, say), so it costs nothing then.
 *
 * Filters judge static facts only — the inventory and the request's requirement fields, never the
 * free/reserved state (the framework owns that), nor links (the interconnect gang filter owns
 * those) — so their results are memoized per request shape, and kept when `withMeasuredLinks`
 * brings new measurements. A rejecting status should be built once per request, not per GPU.
 */
export interface FilterPlugin {
  readonly name: string;
  hostFilter?(ctx: RequestContext): HostPredicate | null;
  gpuFilter?(ctx: RequestContext): GpuPredicate | null;
  /** The requirement in words for explanations ("≥ 40 GB VRAM"); null when it does not apply. */
  describe(ctx: RequestContext): string | null;
  /**
   * Its reasons name the rejected GPU's own figure (a measured TFLOPS), so a failure's sentence
   * quotes one of them beside the rule. Default false: the rule says it all.
   */
  readonly namesFigures?: boolean;
}

/**
 * Ranks hosts. Raw scores are normalized to 0–100 over the candidate hosts (best = 100), then
 * combined by the registry's weights. Scores order hosts inside the gang search and break ties
 * between gangs of equal predicted step time and price.
 */
export interface ScorePlugin {
  readonly name: string;
  /** Which raw values are better. */
  readonly better: 'higher' | 'lower';
  score(ctx: RequestContext, host: ScoredHost): number;
}

/** Chooses the gang: hosts and GPU counts. Exactly one per registry. */
export interface AssemblerPlugin {
  readonly name: string;
  assemble(ctx: AssemblyContext): AssemblyResult;
}

/**
 * Checks a complete gang against one hard constraint. The assembler builds gangs that satisfy
 * them; the framework runs these on the chosen gang as a last line of defence (a failure here is a
 * bug, reported as `Error`).
 */
export interface GangFilterPlugin {
  readonly name: string;
  filterGang(ctx: RequestContext, gang: GangView): Status;
}

export interface WeightedScore {
  readonly plugin: ScorePlugin;
  readonly weight: number;
}

/** The plugins one scheduling profile runs, in order. */
export interface PluginRegistry {
  readonly preFilters: readonly PreFilterPlugin[];
  /** Host filters run before GPU filters; within each kind, in this order. */
  readonly filters: readonly FilterPlugin[];
  readonly scores: readonly WeightedScore[];
  readonly assembler: AssemblerPlugin;
  readonly gangFilters: readonly GangFilterPlugin[];
}
