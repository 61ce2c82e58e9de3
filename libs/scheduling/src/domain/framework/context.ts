import type { GangRequest, WorkloadModel } from '../model/request';
import type {
  ClusterSnapshot,
  CompiledGpu,
  CompiledHost,
  CompiledProvider,
  Inventory,
} from '../snapshot/cluster-snapshot';

/** What every plugin sees about the allocation being placed. */
export interface RequestContext {
  readonly request: GangRequest;
  readonly inventory: Inventory;
  /** The request's workload, or the default one. */
  readonly workload: WorkloadModel;
}

export interface PreFilterContext extends RequestContext {
  readonly snapshot: ClusterSnapshot;
}

/** One host as the score plugins see it: its GPUs usable by this request (free and eligible). */
export interface ScoredHost {
  readonly host: CompiledHost;
  readonly provider: CompiledProvider;
  /** Usable GPUs, fastest first. */
  readonly gpus: readonly CompiledGpu[];
  /** Their speeds at the workload's precision, TFLOPS, same order. */
  readonly speeds: readonly number[];
  /** Their prices per hour, minor units, same order. */
  readonly prices: readonly number[];
  /** Free GPUs on the host, usable by this request or not. */
  readonly freeGpus: number;
}
