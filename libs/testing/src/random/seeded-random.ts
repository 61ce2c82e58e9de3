/**
 * A deterministic pseudo-random source: the same seed gives the same sequence on every machine and
 * every run. For tests, property generators and anything that takes `random: () => number` (backoff
 * jitter, say). Not for secrets.
 */
export interface SeededRandom {
  /** The 32-bit seed the sequence started from (a string seed is hashed to it). */
  readonly seed: number;
  /** A float in [0, 1). Bound: pass it where `() => number` is expected. */
  readonly next: () => number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher–Yates); the input is left alone. */
  shuffle<T>(items: readonly T[]): T[];
}

/** FNV-1a: turns a string seed (a test name, say) into a 32-bit one. */
const hashSeed = (seed: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) {
    h ^= seed.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
};

/**
 * A seeded generator (mulberry32: 32-bit state, period 2^32, passes the statistical tests that matter
 * for test data). Print the seed when a randomized test fails so the run can be replayed.
 *
 * @param seed an integer (its low 32 bits are used) or any string.
 */
export const seededRandom = (seed: number | string): SeededRandom => {
  if (typeof seed === 'number' && !Number.isSafeInteger(seed)) {
    throw new RangeError(`seededRandom: seed must be a safe integer or a string, got ${seed}`);
  }
  const start = typeof seed === 'string' ? hashSeed(seed) : seed >>> 0;
  let state = start;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => {
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min > max) {
      throw new RangeError(`SeededRandom.int: need integers min ≤ max, got [${min}, ${max}]`);
    }
    return min + Math.floor(next() * (max - min + 1));
  };
  return {
    seed: start,
    next,
    int,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('SeededRandom.pick: the array is empty');
      return items[int(0, items.length - 1)]!;
    },
    shuffle: <T>(items: readonly T[]): T[] => {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
};
