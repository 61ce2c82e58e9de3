import { type GangRequest, MAX_GPUS_PER_HOST } from '../model/request';

/** A gang request's shape in whole-rank steps. */
export interface ShapeLimits {
  /** GPUs in total. */
  readonly total: number;
  /** GPUs per rank: every node's count is a multiple of it. */
  readonly step: number;
  /** Fewest GPUs on a chosen node (a multiple of `step`). */
  readonly perNodeMin: number;
  /** Most GPUs on a chosen node (a multiple of `step`). */
  readonly perNodeMax: number;
  readonly maxNodes: number;
}

export const shapeLimits = (r: GangRequest): ShapeLimits => {
  const step = Math.max(1, r.gpusPerRank);
  const min = r.gpusPerNode?.min ?? step;
  const max = Math.min(r.gpusPerNode?.max ?? MAX_GPUS_PER_HOST, MAX_GPUS_PER_HOST);
  return {
    total: r.gpuCount,
    step,
    perNodeMin: Math.max(step, Math.ceil(min / step) * step),
    perNodeMax: Math.floor(max / step) * step,
    maxNodes: r.maxNodes,
  };
};

/**
 * Splits `total` GPUs over nodes with the given capacities: every node gets at least `min`, at most
 * its capacity, a multiple of `step`; the rest goes one rank at a time to the node whose cost grows
 * least (`cost(i, n)`: the node's intra-host all-reduce time with n GPUs), which balances the nodes
 * and so minimizes the slowest node's share. Null when impossible.
 */
export const distribute = (
  total: number,
  caps: readonly number[],
  min: number,
  step: number,
  cost: (i: number, n: number) => number,
): number[] | null => {
  const k = caps.length;
  if (k === 0 || k * min > total) return null;
  let capacity = 0;
  for (const c of caps) {
    if (c < min) return null;
    capacity += c;
  }
  if (capacity < total) return null;
  const counts = caps.map(() => min);
  let rest = total - k * min;
  if (rest % step !== 0) return null;
  while (rest > 0) {
    let best = -1;
    let bestCost = Infinity;
    for (let i = 0; i < k; i++) {
      const next = counts[i]! + step;
      if (next > caps[i]!) continue;
      const c = cost(i, next);
      if (c < bestCost || (c === bestCost && best >= 0 && caps[i]! > caps[best]!)) {
        best = i;
        bestCost = c;
      }
    }
    if (best < 0) return null;
    counts[best] = counts[best]! + step;
    rest -= step;
  }
  return counts;
};
