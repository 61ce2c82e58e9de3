import {
  type CompiledGpu,
  type CompiledProvider,
  type Inventory,
  memoized,
} from '../snapshot/cluster-snapshot';

/** The provider's asking price for one GPU-hour of this GPU, minor units; null when it does not offer the model. */
export const gpuPrice = (gpu: CompiledGpu, provider: CompiledProvider): number | null =>
  provider.policy.pricePerGpuHourMinor[gpu.model] ?? provider.policy.defaultPricePerGpuHourMinor;

/** Every GPU's price by global GPU index; NaN where its provider does not offer it (memoized). */
export const gpuPrices = (inv: Inventory): Float64Array =>
  memoized(inv, 'prices', () =>
    Float64Array.from(
      inv.gpus,
      (g) => gpuPrice(g, inv.providers[inv.hosts[g.hostIndex]!.providerIndex]!) ?? NaN,
    ),
  );
