import {
  createRegistry,
  defaultRegistry,
  GPU_MODEL,
  PRICE_CAP,
  type PluginRegistry,
  SUBNET,
  TFLOPS,
  VERIFIED_GPUS,
} from '@gpunet/scheduling';
import { discoveryOfferFilter } from './discovery-offer.filter';
import { isolationFilter, type IsolationView } from './isolation.filter';
import { measuredTflopsFilter } from './measured-tflops.filter';
import { modelWordsFilter } from './model-words.filter';
import type { GpuPrice } from './subnet-pricing';
import { subnetPricingFilter } from './subnet-pricing.filter';
import { type SubnetStandingView, subnetStandingFilter } from './subnet-standing.filter';

/**
 * The job's subnet's rules for one round: who stands in it, what each candidate GPU is paid, and
 * the isolation its edges must run ranks with.
 */
export interface SubnetRules {
  readonly standing: SubnetStandingView;
  readonly isolation: IsolationView;
  /** GPU uuid → its price (its bid, in an auction) under the job's terms. */
  readonly prices: ReadonlyMap<string, GpuPrice>;
  readonly pricing: 'fixed' | 'auction';
}

/**
 * The core's default pipeline as the scheduler runs it: models matched by word sequence, TFLOPS
 * minimums only on measured GPUs (`measured-tflops` just before the core's `tflops`), only members
 * in good standing of the job's subnet (`subnet-standing`, after the core's `subnet`), only GPUs
 * the job's pricing can pay (`subnet-pricing`, after the core's `price-cap`), only edges that run
 * ranks with the isolation the subnet requires (`isolation`, after the core's trust filters), and
 * only the GPUs discovery offered for each allocation. `subnet` null: no subnet rules (the core's
 * pipeline alone).
 */
export const placementRegistry = (
  /** Allocation name → GPU uuids discovery offered for it. */
  offered: ReadonlyMap<string, ReadonlySet<string>>,
  subnet: SubnetRules | null,
): PluginRegistry =>
  createRegistry({
    filters: [
      ...defaultRegistry.filters.flatMap((f) => {
        if (f.name === GPU_MODEL) return [modelWordsFilter];
        if (f.name === TFLOPS) return [measuredTflopsFilter, f];
        if (subnet !== null && f.name === SUBNET) return [f, subnetStandingFilter(subnet.standing)];
        if (subnet !== null && f.name === PRICE_CAP)
          return [f, subnetPricingFilter(subnet.prices, subnet.pricing)];
        if (subnet !== null && f.name === VERIFIED_GPUS) return [f, isolationFilter(subnet.isolation)];
        return [f];
      }),
      discoveryOfferFilter(offered),
    ],
  });
