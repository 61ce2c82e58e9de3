import fc from 'fast-check';
import { type EnsembleRequest, type GangRequest, gangRequest, type Inventory } from '../src';

const MODELS = [
  'H100-SXM',
  'A100-80G',
  'A100-40G',
  'L40S',
  'RTX-A6000',
  'RTX-4090',
  'RTX-3090',
  'V100-32G',
  'T4',
  'MI300X',
  'MI250X',
];

/** A random gang request exercising every constraint the scheduler knows. */
export const gangArb = (name = 'main', maxGpus = 24): fc.Arbitrary<GangRequest> =>
  fc
    .record({
      perRank: fc.constantFrom(1, 1, 2, 4),
      ranks: fc.integer({ min: 1, max: maxGpus }),
      vendor: fc.constantFrom<'any' | 'nvidia' | 'amd'>('any', 'any', 'nvidia', 'amd'),
      models: fc.oneof(fc.constant([] as string[]), fc.subarray(MODELS, { minLength: 1, maxLength: 4 })),
      minVramGb: fc.constantFrom(0, 0, 16, 24, 40, 80),
      cc: fc.constantFrom(null, null, { major: 8, minor: 0 }, { major: 8, minor: 9 }),
      cuda: fc.constantFrom(null, null, '>=12.2', '>=12 <12.5'),
      rocm: fc.constantFrom(null, null, '^6.1'),
      minBf16: fc.constantFrom(0, 0, 100, 300),
      mixed: fc.boolean(),
      perNode: fc.option(
        fc.record({ min: fc.integer({ min: 1, max: 4 }), extra: fc.integer({ min: 0, max: 8 }) }),
        { nil: null },
      ),
      maxNodes: fc.integer({ min: 1, max: 12 }),
      placement: fc.constantFrom<'pack' | 'spread' | 'any'>('pack', 'pack', 'spread', 'any'),
      minBw: fc.constantFrom(null, null, null, 10e9, 100e9),
      maxRtt: fc.constantFrom(null, null, null, 2_000, 20_000),
      sameSite: fc.constantFrom(false, false, true),
      price: fc.constantFrom(null, null, 500_000, 1_500_000),
      subnet: fc.constantFrom(null, null, 'ai', 'public'),
      location: fc.constantFrom(
        { accept: [], reject: [] },
        { accept: [], reject: [] },
        { accept: [{ continent: 'EU' }, { continent: 'NA' }], reject: [] },
        { accept: [], reject: [{ continent: 'AS' }] },
      ),
    })
    .map((x) => {
      const gpuCount = Math.min(x.ranks * x.perRank, maxGpus * 2);
      const gpusPerNode =
        x.perNode === null
          ? null
          : { min: x.perNode.min * x.perRank, max: (x.perNode.min + x.perNode.extra) * x.perRank };
      return gangRequest({
        name,
        gpuCount: gpuCount - (gpuCount % x.perRank) || x.perRank,
        gpusPerRank: x.perRank,
        vendor: x.vendor,
        models: x.models,
        minVramBytes: x.minVramGb * 1e9,
        minComputeCapability: x.cc,
        cudaRange: x.cuda,
        rocmRange: x.rocm,
        minTflops: x.minBf16 > 0 ? { bf16: x.minBf16 } : {},
        mixedModels: x.mixed,
        gpusPerNode: gpusPerNode !== null && gpusPerNode.max <= 32 ? gpusPerNode : null,
        maxNodes: x.maxNodes,
        placement: x.placement,
        interconnect: { minBandwidthBps: x.minBw, maxRttUs: x.maxRtt, sameSite: x.sameSite },
        maxPricePerGpuHourMinor: x.price,
        subnet: x.subnet,
        location: x.location,
      });
    });

/** A random ensemble of two or three allocations, maybe linked by edge constraints. */
export const ensembleArb = (id: string): fc.Arbitrary<EnsembleRequest> =>
  fc
    .tuple(
      fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 2, maxLength: 3 }),
      fc.constantFrom(null, 5_000, 50_000),
      fc.boolean(),
    )
    .chain(([names, rtt, link]) =>
      fc.tuple(...names.map((_, i) => gangArb(`a${i}`, 12))).map((allocations) => ({
        id,
        allocations,
        edgeConstraints: link
          ? [{ between: ['a0', 'a1'] as const, maxRttUs: rtt, minBandwidthBps: null }]
          : [],
      })),
    );

/** Distinct GPUs per model in an inventory (for picking requests that can succeed). */
export const modelsIn = (inv: Inventory): string[] => [...new Set(inv.gpus.map((g) => g.model))].sort();
