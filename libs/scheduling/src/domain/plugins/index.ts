// Every default plugin with its name and reason constants, for custom registries and for tests.
export { BIN_PACKING, binPackingScore } from './bin-packing/bin-packing.score';
export {
  COMPUTE_CAPABILITY,
  ComputeCapabilityReason,
  computeCapabilityFilter,
} from './compute-capability/compute-capability.filter';
export { GANG_ASSEMBLY, GangAssemblyReason, gangAssembler } from './gang-assembly/gang-assembly.assembler';
export { GPU_MODEL, GpuModelReason, gpuModelFilter } from './gpu-model/gpu-model.filter';
export { GPU_THROUGHPUT, gpuThroughputScore } from './gpu-throughput/gpu-throughput.score';
export {
  INTERCONNECT,
  InterconnectReason,
  interconnectGangFilter,
} from './interconnect/interconnect.gang-filter';
export {
  INTRA_HOST_BANDWIDTH,
  intraHostBandwidthScore,
} from './intra-host-bandwidth/intra-host-bandwidth.score';
export { LIVENESS, LivenessReason, livenessFilter } from './liveness/liveness.filter';
export { LOCATION, LocationReason, locationFilter, matchesLocation } from './location/location.filter';
export {
  MIXED_MODELS,
  MixedModelsReason,
  mixedModelsGangFilter,
} from './mixed-models/mixed-models.gang-filter';
export { NODE_LIMITS, NodeLimitsReason, nodeLimitsPreFilter } from './node-limits/node-limits.prefilter';
export { NODE_SHAPE, NodeShapeReason, nodeShapeGangFilter } from './node-shape/node-shape.gang-filter';
export {
  PINNED_PROVIDER,
  PinnedProviderReason,
  pinnedProviderFilter,
} from './pinned-provider/pinned-provider.filter';
export { PRICE_CAP, PriceCapReason, priceCapFilter } from './price-cap/price-cap.filter';
export { PRICE, priceScore } from './price/price.score';
export {
  PROVIDER_POLICY,
  ProviderPolicyReason,
  providerPolicyFilter,
} from './provider-policy/provider-policy.filter';
export {
  REQUEST_SHAPE,
  RequestShapeReason,
  requestShapePreFilter,
} from './request-shape/request-shape.prefilter';
export {
  RUNTIME_VERSION,
  RuntimeVersionReason,
  runtimeVersionFilter,
} from './runtime-version/runtime-version.filter';
export {
  SIMULATED_GPUS,
  SimulatedGpusReason,
  simulatedGpusFilter,
} from './simulated-gpus/simulated-gpus.filter';
export { SUBNET, SubnetReason, subnetFilter } from './subnet/subnet.filter';
export { TFLOPS, TflopsReason, tflopsFilter } from './tflops/tflops.filter';
export { VENDOR, VendorReason, vendorFilter } from './vendor/vendor.filter';
export { VERIFIED_GPUS, VerifiedGpusReason, verifiedGpusFilter } from './verified-gpus/verified-gpus.filter';
export { VRAM, VramReason, vramFilter } from './vram/vram.filter';
