import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Coordinate,
  fitCoordinates,
  freshState,
  median,
  mulberry32,
  pairKey,
  predictRtt,
  relativeError,
  samplePeers,
  vivaldiUpdate,
} from '../src';

/** Hosts placed in a latency plane (µs) around a few sites, with small access heights: RTTs Vivaldi can embed. */
const layout = (seed: number, hosts: number, sites: number) => {
  const rng = mulberry32(seed);
  const centres = Array.from({ length: sites }, () => ({ x: rng() * 60_000, y: rng() * 60_000 }));
  const ids = Array.from({ length: hosts }, (_, i) => `h${String(i).padStart(2, '0')}`);
  const truth = new Map<string, Coordinate>(
    ids.map((id, i) => {
      const c = centres[i % sites]!;
      return [id, { x: c.x + (rng() - 0.5) * 300, y: c.y + (rng() - 0.5) * 300, height: 50 + rng() * 200 }];
    }),
  );
  return { ids, truth, rng, rtt: (a: string, b: string) => predictRtt(truth.get(a)!, truth.get(b)!) };
};

describe('vivaldiUpdate', () => {
  it('moves a coordinate so that the predicted RTT gets closer to the sample', () => {
    fc.assert(
      fc.property(
        fc.record({
          x: fc.double({ min: -1e5, max: 1e5, noNaN: true }),
          y: fc.double({ min: -1e5, max: 1e5, noNaN: true }),
          height: fc.double({ min: 0, max: 1e4, noNaN: true }),
        }),
        fc.double({ min: 10, max: 3e5, noNaN: true }),
        fc.integer(),
        (peerCoord, rtt, seed) => {
          const self = freshState({ x: 0, y: 0, height: 10 });
          const peer = { coord: peerCoord, error: 0.5 };
          const before = Math.abs(predictRtt(self.coord, peer.coord) - rtt);
          const after = vivaldiUpdate(self, peer, rtt, mulberry32(seed));
          expect(Math.abs(predictRtt(after.coord, peer.coord) - rtt)).toBeLessThanOrEqual(before + 1e-6);
          expect(after.coord.height).toBeGreaterThanOrEqual(0);
          expect(after.error).toBeGreaterThanOrEqual(0);
          expect(after.error).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it('pushes two hosts that sit on one point apart in a random direction', () => {
    const at = freshState({ x: 5, y: 5, height: 0 });
    const moved = vivaldiUpdate(at, at, 1000, mulberry32(7));
    expect(Math.hypot(moved.coord.x - 5, moved.coord.y - 5)).toBeGreaterThan(0);
  });

  it('ignores samples that are not positive finite RTTs', () => {
    const s = freshState({ x: 1, y: 2, height: 3 });
    for (const rtt of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(vivaldiUpdate(s, freshState({ x: 9, y: 9, height: 0 }), rtt, mulberry32(1))).toBe(s);
  });
});

describe('fitCoordinates', () => {
  it('predicts pairs it never saw within a few percent when the RTTs are embeddable (12 hosts, k = 3)', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const { ids, rtt, rng } = layout(seed, 12, 5);
      const pairs = samplePeers(ids, { k: 3, rng });
      const probed = new Set(pairs.map((p) => pairKey(p.prober, p.peer)));
      const fit = fitCoordinates(
        ids,
        pairs.map((p) => ({ a: p.prober, b: p.peer, rtt: rtt(p.prober, p.peer) * (1 + rng() * 0.03) })),
        { rng },
      );
      const errors: number[] = [];
      for (const a of ids)
        for (const b of ids)
          if (a < b && !probed.has(pairKey(a, b)))
            errors.push(
              relativeError(predictRtt(fit.states.get(a)!.coord, fit.states.get(b)!.coord), rtt(a, b)),
            );
      expect(errors.length, `seed ${seed}: pairs never probed`).toBeGreaterThan(20);
      expect(median(errors), `seed ${seed}`).toBeLessThan(0.08);
    }
  });

  it('is deterministic for a seed and starts from the previous fit when given one', () => {
    const { ids, rtt } = layout(9, 8, 3);
    const samples = samplePeers(ids, { k: 3, rng: mulberry32(1) }).map((p) => ({
      a: p.prober,
      b: p.peer,
      rtt: rtt(p.prober, p.peer),
    }));
    const one = fitCoordinates(ids, samples, { rng: mulberry32(42) });
    const two = fitCoordinates(ids, samples, { rng: mulberry32(42) });
    expect([...two.states]).toEqual([...one.states]);
    const warm = fitCoordinates(ids, samples, {
      rng: mulberry32(43),
      restarts: 1,
      rounds: 20,
      initial: new Map([...one.states].map(([h, s]) => [h, s.coord])),
    });
    expect(warm.sampleError).toBeLessThan(0.05);
  });

  it('places hosts that only appear in samples, and copes with no samples', () => {
    const fit = fitCoordinates(['a'], [{ a: 'a', b: 'b', rtt: 1000 }], { rng: mulberry32(1) });
    expect(fit.states.has('b')).toBe(true);
    expect(fitCoordinates(['a', 'b'], [], { rng: mulberry32(1) }).sampleError).toBe(0);
  });
});
