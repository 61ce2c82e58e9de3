import { describe, expect, it } from 'vitest';
import {
  baselines,
  createSnapshot,
  exhaustiveOptimum,
  gangRequest,
  generateQualityInstance,
  generateSmallCluster,
  type GangRequest,
  predictStepTime,
  scheduleGang,
} from '../src';

/** Every count vector (0, or per-node limits in whole ranks, at most the host's free GPUs), each host's fastest GPUs. */
const bruteForce = (snapshot: ReturnType<typeof createSnapshot>, gang: GangRequest): number | null => {
  const inv = snapshot.inventory;
  const hosts = inv.hosts.map((h) => {
    const free = inv.gpus
      .slice(h.gpuStart, h.gpuStart + h.gpuCount)
      .filter((g) => ((snapshot.freeMask[h.index]! >>> g.local) & 1) === 1);
    return { h, free };
  });
  let best: number | null = null;
  const counts: number[] = hosts.map(() => 0);
  const visit = (i: number, left: number): void => {
    if (i === hosts.length) {
      if (left !== 0) return;
      const nodes = hosts.flatMap((x, j) => (counts[j]! > 0 ? [{ x, n: counts[j]! }] : []));
      if (nodes.length > gang.maxNodes) return;
      const models = new Set(nodes.flatMap(({ x, n }) => x.free.slice(0, n).map((g) => g.model)));
      // Mixed-model gangs need every host's n fastest of one model; the brute force only tries whole-model hosts here.
      if (!gang.mixedModels && models.size > 1) return;
      const speeds = nodes.flatMap(({ x, n }) =>
        x.free
          .map((g) => g.tflops.bf16 ?? g.tflops.fp16 ?? g.tflops.fp32 ?? 0.1)
          .sort((a, b) => b - a)
          .slice(0, n),
      );
      const p = predictStepTime(
        inv,
        gang.workload ?? { precision: 'bf16', flopPerStepPerGpu: 5e13, allReduceBytes: 2e9 },
        nodes.map(({ x, n }) => ({ host: x.h.index, gpus: n })),
        Math.min(...speeds),
      );
      if (best === null || p.stepUs < best) best = p.stepUs;
      return;
    }
    for (let n = 0; n <= Math.min(left, hosts[i]!.free.length); n++) {
      counts[i] = n;
      visit(i + 1, left - n);
    }
    counts[i] = 0;
  };
  visit(0, gang.gpuCount);
  return best;
};

describe('exhaustiveOptimum', () => {
  it.each(Array.from({ length: 25 }, (_, i) => i))('equals brute force on tiny instance %i', (seed) => {
    // Single-model hosts, so "each host's fastest GPUs of one model" is every choice there is.
    const snapshot = createSnapshot(generateSmallCluster(1000 + seed, { maxGpus: 14, maxHosts: 4 }));
    const gang = gangRequest({
      gpuCount: 2 + (seed % 7),
      mixedModels: seed % 2 === 0,
      maxNodes: 1 + (seed % 4),
    });
    const exact = exhaustiveOptimum(snapshot, gang);
    const brute = bruteForce(snapshot, gang);
    expect(exact === null).toBe(brute === null);
    if (exact !== null && brute !== null) expect(exact.stepUs).toBeCloseTo(brute, 3);
  });
});

describe('quality: predicted step time against the exhaustive optimum', () => {
  it('is within 5% on ≥ 95% of 300 small instances (≤ 40 GPUs), never infeasible when a gang exists', () => {
    const rows = Array.from({ length: 300 }, (_, seed) => {
      const { cluster, request } = generateQualityInstance(seed);
      const snapshot = createSnapshot(cluster);
      const optimum = exhaustiveOptimum(snapshot, request);
      const r = scheduleGang(snapshot, 'q', request, { seed });
      const ours = r.code === 'Success' ? r.placement.allocations[0]!.prediction.stepUs : null;
      const ff = baselines.firstFit(snapshot, 'q', request)?.allocations[0]!.prediction.stepUs ?? null;
      return { seed, optimum: optimum?.stepUs ?? null, ours, ff };
    });
    const solvable = rows.filter((r) => r.optimum !== null);
    expect(solvable.length).toBeGreaterThanOrEqual(200);
    for (const r of solvable) expect(r.ours, `instance ${r.seed}`).not.toBeNull();
    const within = (x: number | null, opt: number) => x !== null && x <= opt * 1.05;
    const share = solvable.filter((r) => within(r.ours, r.optimum!)).length / solvable.length;
    const ffShare = solvable.filter((r) => within(r.ff, r.optimum!)).length / solvable.length;
    console.log(
      `quality: ${(share * 100).toFixed(1)}% within 5% (first-fit ${(ffShare * 100).toFixed(1)}%) over ${solvable.length} instances`,
    );
    expect(share).toBeGreaterThanOrEqual(0.95);
    for (const r of rows) if (r.optimum === null) expect(r.ours).toBeNull();
  }, 120_000);
});
