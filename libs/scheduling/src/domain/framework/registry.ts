import { binPackingScore } from '../plugins/bin-packing/bin-packing.score';
import { computeCapabilityFilter } from '../plugins/compute-capability/compute-capability.filter';
import { gangAssembler } from '../plugins/gang-assembly/gang-assembly.assembler';
import { gpuModelFilter } from '../plugins/gpu-model/gpu-model.filter';
import { gpuThroughputScore } from '../plugins/gpu-throughput/gpu-throughput.score';
import { interconnectGangFilter } from '../plugins/interconnect/interconnect.gang-filter';
import { intraHostBandwidthScore } from '../plugins/intra-host-bandwidth/intra-host-bandwidth.score';
import { livenessFilter } from '../plugins/liveness/liveness.filter';
import { locationFilter } from '../plugins/location/location.filter';
import { mixedModelsGangFilter } from '../plugins/mixed-models/mixed-models.gang-filter';
import { nodeLimitsPreFilter } from '../plugins/node-limits/node-limits.prefilter';
import { nodeShapeGangFilter } from '../plugins/node-shape/node-shape.gang-filter';
import { pinnedProviderFilter } from '../plugins/pinned-provider/pinned-provider.filter';
import { priceCapFilter } from '../plugins/price-cap/price-cap.filter';
import { priceScore } from '../plugins/price/price.score';
import { providerPolicyFilter } from '../plugins/provider-policy/provider-policy.filter';
import { requestShapePreFilter } from '../plugins/request-shape/request-shape.prefilter';
import { runtimeVersionFilter } from '../plugins/runtime-version/runtime-version.filter';
import { simulatedGpusFilter } from '../plugins/simulated-gpus/simulated-gpus.filter';
import { subnetFilter } from '../plugins/subnet/subnet.filter';
import { tflopsFilter } from '../plugins/tflops/tflops.filter';
import { vendorFilter } from '../plugins/vendor/vendor.filter';
import { verifiedGpusFilter } from '../plugins/verified-gpus/verified-gpus.filter';
import { vramFilter } from '../plugins/vram/vram.filter';
import type { PluginRegistry } from './plugin';

/**
 * The default profile. Filters are ordered cheap and decisive first (host-level rules drop whole
 * hosts before any GPU is looked at); explanations count each rejected GPU under the first filter
 * that rejected it, so the order also decides how reasons read.
 */
export const defaultRegistry: PluginRegistry = Object.freeze({
  preFilters: [requestShapePreFilter, nodeLimitsPreFilter],
  filters: [
    livenessFilter,
    pinnedProviderFilter,
    subnetFilter,
    locationFilter,
    providerPolicyFilter,
    vendorFilter,
    gpuModelFilter,
    vramFilter,
    computeCapabilityFilter,
    runtimeVersionFilter,
    tflopsFilter,
    priceCapFilter,
    // Last: a GPU is counted as refused for trust only when it would otherwise serve the request.
    simulatedGpusFilter,
    verifiedGpusFilter,
  ],
  scores: [
    { plugin: binPackingScore, weight: 3 },
    { plugin: gpuThroughputScore, weight: 1 },
    { plugin: priceScore, weight: 1 },
    { plugin: intraHostBandwidthScore, weight: 1 },
  ],
  assembler: gangAssembler,
  gangFilters: [nodeShapeGangFilter, interconnectGangFilter, mixedModelsGangFilter],
});

/** A profile derived from the default one: replace any part, e.g. `{ scores: [...] }`. */
export const createRegistry = (overrides: Partial<PluginRegistry>): PluginRegistry =>
  Object.freeze({ ...defaultRegistry, ...overrides });
