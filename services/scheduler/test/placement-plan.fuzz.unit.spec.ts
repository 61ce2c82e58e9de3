import { parseEnsembleSpec } from '@gpunet/ensemble-spec';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planFor } from '../src/domain/placement-plan';
import { fundedJob } from './support/fixtures';

/**
 * Any spec the ensemble-spec parser accepts maps to a plan without throwing, and the plan keeps the
 * invariants the core and discovery rely on: whole ranks per node, bounds within discovery's limits,
 * CPU/memory asked for the fewest ranks a node may run.
 */
describe('placement plan (fuzz)', () => {
  it('every accepted distributed GPU spec maps to a consistent gang and query', () => {
    let accepted = 0;
    const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({
          count: fc.integer({ min: 1, max: 256 }),
          gpusPerRank: opt(fc.integer({ min: 1, max: 16 })),
          rpnMin: opt(fc.integer({ min: 1, max: 16 })),
          rpnMax: opt(fc.integer({ min: 1, max: 64 })),
          maxNodes: opt(fc.integer({ min: 1, max: 128 })),
          cores: fc.integer({ min: 1, max: 64 }),
          distributed: fc.boolean(),
          placement: fc.constantFrom('pack', 'spread', 'any'),
        }),
        (r) => {
          const rpn =
            r.rpnMin === undefined && r.rpnMax === undefined
              ? ''
              : `, ranks_per_node: { ${[
                  r.rpnMin === undefined ? '' : `min: ${r.rpnMin}`,
                  r.rpnMax === undefined ? '' : `max: ${r.rpnMax}`,
                ]
                  .filter(Boolean)
                  .join(', ')} }`;
          const distributed = r.distributed
            ? `    distributed: { framework: torchrun, placement: ${r.placement}${
                r.gpusPerRank === undefined ? '' : `, gpus_per_rank: ${r.gpusPerRank}`
              }${rpn}${r.maxNodes === undefined ? '' : `, max_nodes: ${r.maxNodes}`} }\n`
            : '';
          const parsed = parseEnsembleSpec(`apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: fuzz }
max_duration: 1h
allocations:
  main:
    execution: { image: alpine, cmd: [sh] }
    resources: { cpu: { cores: ${r.cores} }, ram: { size: 1GiB }, gpus: { count: ${r.count} } }
${distributed}`);
          if (!parsed.ok) return;
          accepted++;
          const result = planFor(fundedJob({ gpus: r.count }), parsed.spec);
          expect(result.ok).toBe(true);
          if (!result.ok) return;
          const [a] = result.plan.allocations;
          const g = a!.gang;
          expect(g.gpuCount).toBe(r.count);
          expect(g.gpuCount % g.gpusPerRank).toBe(0);
          expect(g.gpusPerNode!.min % g.gpusPerRank).toBe(0);
          expect(g.gpusPerNode!.max % g.gpusPerRank).toBe(0);
          expect(g.gpusPerNode!.min).toBeLessThanOrEqual(g.gpusPerNode!.max);
          expect(g.maxNodes).toBeGreaterThanOrEqual(1);
          expect(a!.query.minGpusPerProvider).toBeGreaterThanOrEqual(1);
          expect(a!.query.minGpusPerProvider).toBeLessThanOrEqual(64);
          const fewestRanks = g.gpusPerNode!.min / g.gpusPerRank;
          expect(a!.query.minCpuMillicores).toBe(r.cores * 1000 * fewestRanks);
          if (!r.distributed) expect([g.gpusPerRank, g.maxNodes]).toEqual([r.count, 1]);
        },
      ),
      { numRuns: 300, seed: 5 },
    );
    // The generator is not all rejects: most shapes are valid specs.
    expect(accepted).toBeGreaterThan(100);
  });
});
