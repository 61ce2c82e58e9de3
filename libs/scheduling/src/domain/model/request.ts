import type { ComputeCapability, ProviderLocation } from './snapshot-input';
import type { Precision } from './precision';

/**
 * What one allocation of an ensemble asks for: the scheduler's own shape (the service maps the
 * normalized ensemble spec to it). Every field is explicit; `gangRequest()` fills the defaults.
 */
export type VendorRequirement = 'nvidia' | 'amd' | 'any';

/** pack: fewest nodes, fastest predicted step; spread: as many nodes as allowed; any: cheapest. */
export type PlacementStrategy = 'pack' | 'spread' | 'any';

export interface Range {
  readonly min: number;
  readonly max: number;
}

export interface InterconnectRequirement {
  /** Every pair of chosen nodes must have at least this much bandwidth, bits/s. */
  readonly minBandwidthBps: number | null;
  /** Every pair of chosen nodes must be within this RTT, µs. */
  readonly maxRttUs: number | null;
  /** All chosen nodes at one site. */
  readonly sameSite: boolean;
}

/** A location rule entry: a host matches when every non-null field equals its provider's. */
export type LocationMatch = Partial<ProviderLocation>;

export interface LocationRequirement {
  /** Empty: anywhere; otherwise the provider must match one entry. */
  readonly accept: readonly LocationMatch[];
  /** The provider must match none. */
  readonly reject: readonly LocationMatch[];
}

/**
 * What the job does each step, for the objective (the predicted step time). A data-parallel step: every GPU
 * computes `flopPerStepPerGpu`, then the gang all-reduces `allReduceBytes`.
 */
export interface WorkloadModel {
  /** The precision compute runs in; a GPU without a figure for it falls back to fp16, then fp32. */
  readonly precision: Precision;
  readonly flopPerStepPerGpu: number;
  readonly allReduceBytes: number;
}

export interface GangRequest {
  /** The allocation's name (unique in its ensemble); edge constraints name it. */
  readonly name: string;
  readonly gpuCount: number;
  readonly vendor: VendorRequirement;
  /** Accepted models, upper case; empty = any model. */
  readonly models: readonly string[];
  readonly minVramBytes: number;
  /** Applies to NVIDIA candidates only. */
  readonly minComputeCapability: ComputeCapability | null;
  /** Applies to AMD candidates only; empty = any architecture. */
  readonly amdArchitectures: readonly string[];
  /** semver range the host's CUDA version must satisfy (NVIDIA candidates). */
  readonly cudaRange: string | null;
  /** semver range the host's ROCm version must satisfy (AMD candidates). */
  readonly rocmRange: string | null;
  readonly minTflops: Readonly<Partial<Record<Precision, number>>>;
  /** Whether a gang may mix GPU models. When false, every chosen GPU is the same model. */
  readonly mixedModels: boolean;
  /** GPUs each rank (process) uses; a node's GPU count is a multiple of it. */
  readonly gpusPerRank: number;
  /** GPUs per node (host); null = `{ min: gpusPerRank, max: 32 }`. */
  readonly gpusPerNode: Range | null;
  readonly maxNodes: number;
  readonly placement: PlacementStrategy;
  readonly interconnect: InterconnectRequirement;
  /** Highest price per GPU-hour the job pays, minor units; null = no cap. */
  readonly maxPricePerGpuHourMinor: number | null;
  /** Subnet the job runs in; null = any provider. */
  readonly subnet: string | null;
  readonly location: LocationRequirement;
  /** Pin to one provider (the spec's `nodes.<n>.peer`); null = any. */
  readonly pinnedProvider: string | null;
  /** Whose GPUs may serve it: simulated ones, unverified ones. Default `TRUST_ANY`. */
  readonly trust: TrustRequirement;
  /** null = the default workload (`DEFAULT_WORKLOAD`). */
  readonly workload: WorkloadModel | null;
}

/** A network requirement between the nodes of two allocations (every pair across them). */
export interface EdgeConstraint {
  readonly between: readonly [string, string];
  readonly maxRttUs: number | null;
  readonly minBandwidthBps: number | null;
}

/**
 * Which GPUs a request trusts. `verifiedGpus` governs GPUs that are not simulated; simulated GPUs
 * (never challenged, so never verified) are governed by `simulatedGpus` alone.
 */
export interface TrustRequirement {
  /** `refused`: GPUs declared by simulated edges are not placed. */
  readonly simulatedGpus: 'allowed' | 'refused';
  /** `required`: a GPU that is not simulated is placed only when its verification is `verified`. */
  readonly verifiedGpus: 'required' | 'optional';
  /** Whose rules these are, named in reasons (`subnet 'demo'`); null: the request's own. */
  readonly setBy: string | null;
}

/** Every GPU trusted (synthetic clusters, the bench: nothing there is challenged). */
export const TRUST_ANY: TrustRequirement = Object.freeze({
  simulatedGpus: 'allowed',
  verifiedGpus: 'optional',
  setBy: null,
});

/** Several allocations placed as a whole or not at all. */
export interface EnsembleRequest {
  /** The job id; reservations carry it (`GpuInput.reservedBy`). */
  readonly id: string;
  readonly allocations: readonly GangRequest[];
  readonly edgeConstraints: readonly EdgeConstraint[];
}

/**
 * A data-parallel step of a 1B-parameter model in bf16: 2 GB of gradients, 50 TFLOP per GPU (about
 * 8k tokens per GPU). On one H100 that is ~0.1 s of compute; the all-reduce costs ~10 ms over NVLink
 * and ~0.3 s over 100 Gbit/s Ethernet, so the network matters as much as in real training.
 */
export const DEFAULT_WORKLOAD: WorkloadModel = {
  precision: 'bf16',
  flopPerStepPerGpu: 5e13,
  allReduceBytes: 2e9,
};

/** Most GPUs one host may have in a snapshot (free-GPU sets are 32-bit masks). */
export const MAX_GPUS_PER_HOST = 32;

/** A gang request with every field defaulted: `count` GPUs, any vendor and model, pack. */
export const gangRequest = (init: Partial<GangRequest> & { readonly gpuCount: number }): GangRequest => ({
  name: 'main',
  vendor: 'any',
  models: [],
  minVramBytes: 0,
  minComputeCapability: null,
  amdArchitectures: [],
  cudaRange: null,
  rocmRange: null,
  minTflops: {},
  mixedModels: false,
  gpusPerRank: 1,
  gpusPerNode: null,
  maxNodes: init.gpuCount,
  placement: 'pack',
  interconnect: { minBandwidthBps: null, maxRttUs: null, sameSite: false },
  maxPricePerGpuHourMinor: null,
  subnet: null,
  location: { accept: [], reject: [] },
  pinnedProvider: null,
  trust: TRUST_ANY,
  workload: null,
  ...init,
});

/** An ensemble of one allocation. */
export const singleGang = (id: string, gang: GangRequest): EnsembleRequest => ({
  id,
  allocations: [gang],
  edgeConstraints: [],
});
