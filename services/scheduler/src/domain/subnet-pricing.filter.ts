import { type FilterPlugin, type Status, SUCCESS, unresolvable } from '@gpunet/scheduling';
import type { GpuPrice } from './subnet-pricing';

export const SUBNET_PRICING = 'subnet-pricing';

/**
 * Only GPUs the job's pricing can pay (`subnet-pricing.ts`): in an auction subnet a bid below the
 * reserve or above the job's max price is not offered; at fixed prices a floor above the subnet's
 * price is not (the edge would decline it). Like the core's price cap, waiting does not change it.
 */
export const subnetPricingFilter = (
  /** GPU uuid → its price under the job's terms (every candidate GPU). */
  prices: ReadonlyMap<string, GpuPrice>,
  /** `auction`: reasons and the requirement speak of bids. */
  mode: 'fixed' | 'auction',
): FilterPlugin => ({
  name: SUBNET_PRICING,
  gpuFilter: () => {
    const statuses = new Map<string, Status>();
    return (gpu) => {
      const p = prices.get(gpu.uuid);
      if (p === undefined || p.ok) return SUCCESS;
      let st = statuses.get(p.message);
      if (st === undefined) {
        st = unresolvable(SUBNET_PRICING, p.reason, p.message);
        statuses.set(p.message, st);
      }
      return st;
    };
  },
  describe: () => (mode === 'auction' ? 'bid within the reserve and the max price' : null),
  // Its reasons name the GPU's own bid or floor, so a waiting job's sentence quotes one.
  namesFigures: true,
});
