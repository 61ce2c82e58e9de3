import type { ScorePlugin } from '../../framework/plugin';

export const PRICE = 'price';

/** Cheaper hosts first: the mean price of the GPUs the host would give. */
export const priceScore: ScorePlugin = {
  name: PRICE,
  better: 'lower',
  score: ({ request }, h) => {
    const n = Math.min(h.prices.length, request.gpuCount);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += h.prices[i]!;
    return n === 0 ? 0 : sum / n;
  },
};
