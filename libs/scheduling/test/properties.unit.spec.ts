import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyPlacement,
  createPrng,
  createSnapshot,
  generateCluster,
  gangRequest,
  type Placement,
  releasePlacement,
  schedule,
  singleGang,
  verifyPlacement,
} from '../src';
import { ensembleArb, gangArb } from './generators';

// Seeded: a failure prints the seed and the shrunk counterexample; rerun with the same seed.
const PROPERTY = { seed: 20_250_101, numRuns: 150 } as const;

const clusters = [1, 2, 3].map((seed) =>
  createSnapshot(
    generateCluster({ providers: 60, regions: 3, reservedFraction: 0.2, cappedFraction: 0.3 }, seed),
  ),
);

describe('every placement satisfies every hard constraint', () => {
  it('single gangs', () => {
    let placed = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: clusters.length - 1 }), gangArb(), fc.nat(), (c, gang, seed) => {
        const snapshot = clusters[c]!;
        const request = singleGang('job', gang);
        const r = schedule(snapshot, request, { seed });
        expect(r.code).not.toBe('Error');
        if (r.code === 'Success') {
          placed++;
          expect(verifyPlacement(snapshot, request, r.placement)).toEqual([]);
        } else {
          expect(r.message).toMatch(/GPUs asked|gpu count|max_nodes|every node|rank|cluster has|invalid/);
        }
      }),
      PROPERTY,
    );
    // The generator is not so strict that nothing is ever placed.
    expect(placed).toBeGreaterThan(PROPERTY.numRuns / 10);
  });

  it('ensembles, with edge constraints and shared provider caps', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: clusters.length - 1 }),
        ensembleArb('job'),
        fc.nat(),
        (c, request, seed) => {
          const snapshot = clusters[c]!;
          const r = schedule(snapshot, request, { seed });
          expect(r.code).not.toBe('Error');
          if (r.code === 'Success') expect(verifyPlacement(snapshot, request, r.placement)).toEqual([]);
        },
      ),
      { ...PROPERTY, numRuns: 80 },
    );
  });
});

describe('determinism', () => {
  it('same (snapshot, request, seed) → same result, also from a freshly compiled snapshot', () => {
    const input = generateCluster({ providers: 60, regions: 3, reservedFraction: 0.2 }, 9);
    const a = createSnapshot(input);
    fc.assert(
      fc.property(gangArb(), fc.nat(), (gang, seed) => {
        const request = singleGang('job', gang);
        const first = schedule(a, request, { seed });
        expect(schedule(a, request, { seed })).toEqual(first);
        expect(schedule(createSnapshot(input), request, { seed })).toEqual(first);
      }),
      { ...PROPERTY, numRuns: 60 },
    );
  });
});

describe('no double booking', () => {
  it('1,000 random requests placed one after another never get a GPU twice', () => {
    let snapshot = createSnapshot(generateCluster({ providers: 300, regions: 4, cappedFraction: 0.2 }, 77));
    const rnd = createPrng(4242);
    const holder = new Map<string, string>();
    const live: Placement[] = [];
    const sample = fc.sample(gangArb('main', 16), { seed: 4242, numRuns: 1000 });
    let placed = 0;
    sample.forEach((g, i) => {
      // Unconstrained jobs keep the cluster busy; constrained ones test the filters under load.
      const gang = i % 2 === 0 ? gangRequest({ gpuCount: 1 + Math.floor(rnd() * 16) }) : g;
      const request = singleGang(`job-${i}`, gang);
      const r = schedule(snapshot, request, { seed: i });
      if (r.code !== 'Success') return;
      placed++;
      expect(verifyPlacement(snapshot, request, r.placement)).toEqual([]);
      for (const a of r.placement.allocations) {
        for (const n of a.nodes) {
          for (const uuid of n.gpuUuids) {
            expect(holder.get(uuid)).toBeUndefined();
            holder.set(uuid, r.placement.id);
          }
        }
      }
      snapshot = applyPlacement(snapshot, r.placement);
      live.push(r.placement);
      // Jobs finish: release a random earlier one now and then (idempotently, sometimes twice).
      if (rnd() < 0.4 && live.length > 0) {
        const done = live.splice(Math.floor(rnd() * live.length), 1)[0]!;
        snapshot = releasePlacement(snapshot, done);
        if (rnd() < 0.5) snapshot = releasePlacement(snapshot, done.id);
        for (const [uuid, id] of [...holder]) if (id === done.id) holder.delete(uuid);
      }
    });
    expect(placed).toBeGreaterThan(400);
  }, 120_000);
});
