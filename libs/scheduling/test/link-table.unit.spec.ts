import { describe, expect, it } from 'vitest';
import type { StoredLink } from '../src/domain/snapshot/cluster-snapshot';
import { LinkTable } from '../src/domain/snapshot/link-table';

const link = (rttUs: number): StoredLink => ({
  bandwidthBps: 1e9,
  rttUs,
  bandwidthMeasured: true,
  measuredAt: null,
  relayed: false,
});

describe('LinkTable', () => {
  it('reads as the map of every update applied in order, and leaves earlier tables alone', () => {
    const base = new Map([1, 2, 3].map((k) => [k, link(k)] as const));
    const t1 = LinkTable.with(
      base,
      new Map([
        [2, link(20)],
        [4, link(40)],
      ]),
    );
    const t2 = LinkTable.with(
      t1,
      new Map([
        [4, link(44)],
        [5, link(50)],
      ]),
    );
    const expected = new Map([
      [1, link(1)],
      [2, link(20)],
      [3, link(3)],
      [4, link(44)],
      [5, link(50)],
    ]);
    expect(t2.size).toBe(5);
    expect(new Map(t2)).toEqual(expected);
    expect(new Map([...t2.keys()].map((k) => [k, t2.get(k)]))).toEqual(expected);
    expect([...t2.values()].map((l) => l.rttUs).sort((a, b) => a - b)).toEqual([1, 3, 20, 44, 50]);
    const seen: number[] = [];
    t2.forEach((_l, k, m) => {
      seen.push(k);
      expect(m).toBe(t2);
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5]);
    expect(t2.has(5) && !t2.has(6)).toBe(true);
    expect(t1.get(4)).toEqual(link(40));
    expect(base.get(2)).toEqual(link(2));
  });

  it('folds the recent pairs into a plain map once they outgrow √(base)', () => {
    let t: ReadonlyMap<number, ReturnType<typeof link>> = new Map();
    for (let k = 0; k < 64; k++) t = LinkTable.with(t, new Map([[k, link(k)]]));
    expect(t).toBeInstanceOf(LinkTable);
    t = LinkTable.with(t, new Map([[64, link(64)]]));
    expect(t).not.toBeInstanceOf(LinkTable);
    expect(t.size).toBe(65);
    expect(t.get(10)).toEqual(link(10));
  });
});
