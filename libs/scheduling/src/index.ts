// The pure placement core of gpunet's scheduler: no I/O, deterministic for
// (snapshot, request, seed). See docs/scheduling.md.
export type {
  ClusterSnapshotInput,
  ComputeCapability,
  GpuInput,
  GpuVendor,
  GpuVerification,
  HostInput,
  IntraHostLink,
  LinkInput,
  Liveness,
  NetworkCoordinate,
  NetworkInput,
  ProviderInput,
  ProviderLocation,
  ProviderPolicy,
  SiteInput,
} from './domain/model/snapshot-input';
export { DEFAULT_RELIABILITY } from './domain/model/snapshot-input';
export { PRECISIONS, type Precision } from './domain/model/precision';
export {
  DEFAULT_WORKLOAD,
  type EdgeConstraint,
  type EnsembleRequest,
  type GangRequest,
  gangRequest,
  type InterconnectRequirement,
  type LocationMatch,
  type LocationRequirement,
  MAX_GPUS_PER_HOST,
  type PlacementStrategy,
  type Range,
  singleGang,
  type TrustRequirement,
  TRUST_ANY,
  type VendorRequirement,
  type WorkloadModel,
} from './domain/model/request';
export type {
  AllocationPlacement,
  NodePlacement,
  Placement,
  StepTimePrediction,
} from './domain/model/placement';
export {
  type Alternative,
  type AlternativeNode,
  type AllocationExplanation,
  type FigureSource,
  type GpuFigure,
  type LinkFigure,
  type LossReason,
  MAX_ALTERNATIVES,
  MAX_GPU_FIGURES,
  MAX_LINK_FIGURES,
  type PlacementExplanation,
} from './domain/model/explanation';
export {
  pluginError,
  type Status,
  type StatusCode,
  SUCCESS,
  unresolvable,
  unschedulable,
} from './domain/model/status';
export {
  InvalidSnapshotError,
  isPlacementConflict,
  isSchedulingError,
  PlacementConflictError,
  SchedulingError,
} from './domain/model/errors';
export {
  type ClusterSnapshot,
  type CompiledGpu,
  type CompiledHost,
  type CompiledProvider,
  type CompiledSite,
  createSnapshot,
  freeGpuCount,
  gpuOwner,
  type Inventory,
} from './domain/snapshot/cluster-snapshot';
export { applyPlacement, releasePlacement } from './domain/snapshot/apply-placement';
export { type LinkUpdate, withMeasuredLinks } from './domain/snapshot/with-measured-links';
export { hostLink, type Link, type LinkSource, meetsBounds } from './domain/snapshot/network';
export {
  type GangNetwork,
  gangNetwork,
  gpuTflops,
  predictStepTime,
  type ShapeNode,
} from './domain/objective/step-time';
export { gpuPrice } from './domain/objective/price';
export type { PreFilterContext, RequestContext, ScoredHost } from './domain/framework/context';
export type {
  AssemblerPlugin,
  FilterPlugin,
  GangFilterPlugin,
  GpuPredicate,
  HostPredicate,
  PluginRegistry,
  PreFilterPlugin,
  ScorePlugin,
  WeightedScore,
} from './domain/framework/plugin';
export type {
  AssemblyContext,
  AssemblyResult,
  CandidateGang,
  GangView,
  Pool,
  PoolHost,
} from './domain/assembly/gang';
export { createRegistry, defaultRegistry } from './domain/framework/registry';
export {
  ENSEMBLE,
  EnsembleReason,
  FRAMEWORK,
  FrameworkReason,
  type Reason,
  schedule,
  scheduleGang,
  type ScheduleFailure,
  type ScheduleOptions,
  type ScheduleResult,
  type ScheduleSuccess,
} from './domain/framework/schedule';
export { verifyPlacement, type Violation } from './domain/framework/verify';
export { createPrng, seedFromString } from './domain/random/prng';
export * from './domain/plugins';
export { exhaustiveOptimum, type ExhaustiveResult } from './domain/exhaustive/exhaustive';
export { baselines, type Baseline } from './domain/baselines/baselines';
export { GPU_CATALOG, type GpuModelSpec } from './domain/synthetic/gpu-catalog';
export {
  generateCluster,
  generateQualityInstance,
  generateSmallCluster,
  type SmallClusterSpec,
  type SyntheticClusterSpec,
} from './domain/synthetic/generate-cluster';
export { type MeasuredNetworkSpec, withMeasuredNetwork } from './domain/synthetic/measured-network';
