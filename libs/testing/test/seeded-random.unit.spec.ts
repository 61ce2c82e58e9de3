import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../src';

const take = (n: number, next: () => number): number[] => Array.from({ length: n }, next);

describe('seededRandom', () => {
  it('gives the same sequence for the same seed, on every machine (golden values)', () => {
    // mulberry32 reference output for seed 42; a change here changes every seeded test in the repo.
    expect(take(3, seededRandom(42).next)).toEqual([
      0.6011037519201636, 0.44829055899754167, 0.8524657934904099,
    ]);
    expect(take(50, seededRandom('scheduler').next)).toEqual(take(50, seededRandom('scheduler').next));
  });

  it('gives different sequences for different seeds', () => {
    expect(take(5, seededRandom(1).next)).not.toEqual(take(5, seededRandom(2).next));
    expect(take(5, seededRandom('a').next)).not.toEqual(take(5, seededRandom('b').next));
  });

  it('keeps next() in [0, 1)', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const { next } = seededRandom(seed);
        for (const x of take(100, next)) if (!(x >= 0 && x < 1)) return false;
        return true;
      }),
    );
  });

  it('keeps int(min, max) inside both bounds and reaches both', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: -1_000, max: 1_000 }),
        fc.integer({ min: 0, max: 5 }),
        (seed, min, span) => {
          const rng = seededRandom(seed);
          const values = Array.from({ length: 400 }, () => rng.int(min, min + span));
          return (
            values.every((v) => Number.isInteger(v) && v >= min && v <= min + span) &&
            values.includes(min) &&
            values.includes(min + span)
          );
        },
      ),
    );
  });

  it('picks elements and shuffles into a permutation, leaving the input alone', () => {
    const rng = seededRandom(7);
    const items = ['a', 'b', 'c', 'd', 'e'] as const;
    const picked = new Set(Array.from({ length: 200 }, () => rng.pick(items)));
    expect([...picked].sort()).toEqual([...items]);
    const shuffled = rng.shuffle(items);
    expect([...shuffled].sort()).toEqual([...items]);
    expect(items).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(seededRandom(7).shuffle(items)).not.toBe(seededRandom(7).shuffle(items));
  });

  it('rejects what it cannot honour', () => {
    expect(() => seededRandom(1.5)).toThrow(RangeError);
    expect(() => seededRandom(1).int(3, 2)).toThrow(RangeError);
    expect(() => seededRandom(1).int(0, 1.5)).toThrow(RangeError);
    expect(() => seededRandom(1).pick([])).toThrow(RangeError);
  });
});
