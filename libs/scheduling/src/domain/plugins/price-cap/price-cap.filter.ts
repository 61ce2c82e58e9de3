import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';
import { gpuPrice } from '../../objective/price';

export const PRICE_CAP = 'price-cap';
export const PriceCapReason = { PriceAboveCap: 'PriceAboveCap' } as const;

/** The provider's price for the GPU must not exceed the job's cap per GPU-hour. */
export const priceCapFilter: FilterPlugin = {
  name: PRICE_CAP,
  gpuFilter: ({ request }) => {
    const cap = request.maxPricePerGpuHourMinor;
    if (cap === null) return null;
    const dear = unresolvable(PRICE_CAP, PriceCapReason.PriceAboveCap, `price above ${cap} per GPU-hour`);
    return (gpu, _host, provider) => {
      const price = gpuPrice(gpu, provider);
      return price === null || price <= cap ? SUCCESS : dear;
    };
  },
  describe: ({ request }) =>
    request.maxPricePerGpuHourMinor === null ? null : `≤ ${request.maxPricePerGpuHourMinor} per GPU-hour`,
};
