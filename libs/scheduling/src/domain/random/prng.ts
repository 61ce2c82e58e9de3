/**
 * The scheduler's only source of randomness: seeded, so a (snapshot, request, seed) triple always
 * gives the same placement. It breaks ties between equally good choices, so that identical hosts
 * are not always taken in snapshot order (which would pile every job onto the first ones).
 */

/** A 32-bit integer hash (murmur3's finalizer): well mixed, cheap, stateless. */
export const mix32 = (x: number): number => {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
};

/** A seed from any string (FNV-1a), for callers whose seed is a job id. */
export const seedFromString = (s: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
};

/** A per-item tie-break key: the same (seed, item) always gives the same key. */
export const tieKey = (seed: number, item: number): number => mix32(seed ^ mix32(item + 0x9e3779b9));

/** mulberry32: a small seeded generator of floats in [0, 1). */
export const createPrng = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};
