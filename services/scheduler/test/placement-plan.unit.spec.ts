import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import { parseEnsembleSpecOrThrow } from '@gpunet/ensemble-spec';
import { describe, expect, it } from 'vitest';
import {
  type AllocationPlan,
  planFor,
  type PlanRejection,
  SPEC_PLAN,
  SpecPlanReason,
} from '../src/domain/placement-plan';
import { fundedJob } from './support/fixtures';

const GiB = 1024 ** 3;

/** A spec of one or more allocations (YAML under `allocations:`), with optional nodes/edges. */
const spec = (allocations: string, rest = ''): NormalizedSpec =>
  parseEnsembleSpecOrThrow(
    `apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: plan-test }
max_duration: 2h
allocations:
${allocations}
${rest}`,
  );

const gpuAllocation = (name: string, gpus: string, extra = '') => `  ${name}:
    execution: { image: ghcr.io/example/train:1.0, cmd: [python, train.py] }
    resources:
      cpu: { cores: 4 }
      ram: { size: 16GiB }
      gpus: ${gpus}
${extra}`;

const job = fundedJob({ gpus: 4, gpuClasses: ['H100-80GB'] });

interface Expected {
  readonly gang?: Record<string, unknown>;
  readonly query?: Record<string, unknown>;
  readonly perRank?: AllocationPlan['perRank'];
  readonly image?: string | null;
  readonly edgeConstraints?: readonly unknown[];
}

const cases: { name: string; spec: NormalizedSpec | null; expected: Record<string, Expected> }[] = [
  {
    name: 'no spec (v1 job): the terms — gpus of the job classes, one GPU per rank, no CPU/memory/image',
    spec: null,
    expected: {
      main: {
        gang: { gpuCount: 4, models: ['H100 80GB'], gpusPerRank: 1, maxNodes: 4, gpusPerNode: null },
        query: { minGpusPerProvider: 1, minCpuMillicores: 0, minMemoryBytes: 0, image: null },
        perRank: { cpuMillicores: 0, memoryBytes: 0 },
        image: null,
      },
    },
  },
  {
    name: 'not distributed: one rank holding every GPU, on one node',
    spec: spec(gpuAllocation('train', '{ count: 4, models: [A100 80GB], min_vram: 40GB }')),
    expected: {
      train: {
        gang: {
          gpuCount: 4,
          models: ['A100 80GB'],
          minVramBytes: 40e9,
          gpusPerRank: 4,
          gpusPerNode: { min: 4, max: 4 },
          maxNodes: 1,
        },
        query: {
          minGpusPerProvider: 4,
          minCpuMillicores: 4000,
          minMemoryBytes: 16 * GiB,
          image: 'ghcr.io/example/train:1.0',
          // The spec allows 2 h; the funded terms (escrow) pay for 1 h.
          maxDurationMs: 3_600_000,
        },
        perRank: { cpuMillicores: 4000, memoryBytes: 16 * GiB },
        image: 'ghcr.io/example/train:1.0',
      },
    },
  },
  {
    name: 'data-parallel across providers: one GPU per rank, ≤ 2 ranks per node, spread',
    spec: spec(
      gpuAllocation(
        'ddp',
        '{ count: 4, models: [RTX4090] }',
        `    distributed:
      framework: torchrun
      gpus_per_rank: 1
      ranks_per_node: { max: 2 }
      max_nodes: 2
      placement: spread`,
      ),
    ),
    expected: {
      ddp: {
        gang: {
          gpusPerRank: 1,
          gpusPerNode: { min: 1, max: 2 },
          maxNodes: 2,
          placement: 'spread',
          models: ['RTX4090'],
        },
        query: { minGpusPerProvider: 1, minCpuMillicores: 4000, minMemoryBytes: 16 * GiB },
      },
    },
  },
  {
    name: 'two GPUs per rank, at least two ranks per node: a provider needs CPU/memory for two ranks',
    spec: spec(
      gpuAllocation(
        'tp',
        '{ count: 8, vendor: nvidia, min_compute_capability: "8.0", cuda: ">=12.2" }',
        `    distributed:
      framework: torchrun
      gpus_per_rank: 2
      ranks_per_node: { min: 2, max: 4 }
      interconnect: { min_bandwidth: 100Gbps, max_rtt: 2ms, same_site: true }`,
      ),
    ),
    expected: {
      tp: {
        gang: {
          vendor: 'nvidia',
          minComputeCapability: { major: 8, minor: 0 },
          cudaRange: '>=12.2.0',
          gpusPerRank: 2,
          gpusPerNode: { min: 4, max: 8 },
          maxNodes: 2,
          interconnect: { minBandwidthBps: 100e9, maxRttUs: 2000, sameSite: true },
        },
        query: { minGpusPerProvider: 4, minCpuMillicores: 8000, minMemoryBytes: 32 * GiB },
      },
    },
  },
  {
    name: 'AMD: vendor, architectures and ROCm range reach the core and discovery',
    spec: spec(
      gpuAllocation(
        'rocm',
        '{ count: 2, vendor: amd, models: [MI300X], amd_architectures: [gfx942], rocm: ">=6.0" }',
      ),
    ),
    expected: {
      rocm: {
        gang: { vendor: 'amd', amdArchitectures: ['gfx942'], rocmRange: '>=6.0.0', cudaRange: null },
        query: { gpu: expect.objectContaining({ vendor: 'amd', models: ['MI300X'] }) as unknown },
      },
    },
  },
  {
    name: 'location: the core and discovery both get it',
    spec: spec(
      gpuAllocation(
        'eu',
        '{ count: 1 }',
        `    location: { accept: [{ country: DE }, { country: FR }], reject: [{ city: Paris }] }`,
      ),
    ),
    expected: {
      eu: {
        gang: {
          location: { accept: [{ country: 'DE' }, { country: 'FR' }], reject: [{ city: 'Paris' }] },
        },
        query: {
          location: {
            accept: [
              { continent: null, country: 'DE', city: null, asn: null, isp: null },
              { continent: null, country: 'FR', city: null, asn: null, isp: null },
            ],
            reject: [{ continent: null, country: null, city: 'Paris', asn: null, isp: null }],
          },
        },
      },
    },
  },
  {
    name: 'a node of one allocation pins it to its peer and narrows its location',
    spec: spec(
      gpuAllocation('pinned', '{ count: 1 }', `    location: { accept: [{ continent: EU }] }`),
      `nodes:
  box:
    allocations: [pinned]
    peer: UPEER
    location: { accept: [{ country: DE }, { continent: NA }] }`,
    ),
    expected: {
      pinned: {
        gang: {
          pinnedProvider: 'UPEER',
          location: { accept: [{ continent: 'EU', country: 'DE' }], reject: [] },
        },
      },
    },
  },
  {
    name: 'two allocations: each its own gang, the edge constraint between them (node names resolved)',
    spec: spec(
      `${gpuAllocation('trainer', '{ count: 2 }')}
${gpuAllocation('evaluator', '{ count: 1 }')}`,
      `nodes:
  evalbox: { allocations: [evaluator] }
edge_constraints:
  - { between: [trainer, evalbox], max_rtt: 5ms, min_bandwidth: 10Gbps }`,
    ),
    expected: {
      trainer: { gang: { gpuCount: 2 } },
      evaluator: {
        gang: { gpuCount: 1 },
        edgeConstraints: [{ between: ['evaluator', 'trainer'], maxRttUs: 5000, minBandwidthBps: 10e9 }],
      },
    },
  },
];

describe('placement plan: spec → discovery query and gang request', () => {
  it.each(cases)('$name', ({ spec: s, expected }) => {
    const result = planFor(job, s);
    if (!result.ok) throw new Error(result.rejection.message);
    const { plan } = result;
    expect(plan.allocations.map((a) => a.gang.name).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, e] of Object.entries(expected)) {
      const a = plan.allocations.find((x) => x.gang.name === name)!;
      if (e.gang) expect(a.gang).toMatchObject(e.gang);
      if (e.query) expect(a.query).toMatchObject(e.query);
      if (e.perRank) expect(a.perRank).toEqual(e.perRank);
      if (e.image !== undefined) expect(a.image).toBe(e.image);
      if (e.edgeConstraints) {
        expect(plan.edgeConstraints.map((c) => ({ ...c, between: [...c.between].sort() }))).toEqual(
          e.edgeConstraints,
        );
      }
      // Every request keeps the job's price cap, and the query its asset.
      expect(a.gang.maxPricePerGpuHourMinor).toBe(9_000_000);
      expect(a.query.maxPrice).toEqual({ asset: 'USDC', perGpuHourMinor: '9000000' });
    }
  });

  const rejections: {
    name: string;
    spec: NormalizedSpec;
    reason: string;
    allocation: string | null;
    message: RegExp;
  }[] = [
    {
      name: 'a CPU-only allocation',
      spec: spec(`  cpu:
    execution: { image: alpine, cmd: [sh] }
    resources: { cpu: { cores: 1 }, ram: { size: 1GiB } }`),
      reason: SpecPlanReason.CpuOnlyAllocation,
      allocation: 'cpu',
      message: /CPU-only allocations are not supported yet/,
    },
    {
      name: 'a node co-locating two allocations',
      spec: spec(
        `${gpuAllocation('a', '{ count: 1 }')}\n${gpuAllocation('b', '{ count: 1 }')}`,
        `nodes:
  both: { allocations: [a, b] }`,
      ),
      reason: SpecPlanReason.CoLocatedAllocations,
      allocation: null,
      message: /node 'both' puts allocations 'a', 'b' on one machine/,
    },
    {
      name: 'an allocation and its node in places that exclude each other',
      spec: spec(
        gpuAllocation('x', '{ count: 1 }', `    location: { accept: [{ country: DE }] }`),
        `nodes:
  n: { allocations: [x], location: { accept: [{ country: FR }] } }`,
      ),
      reason: SpecPlanReason.ConflictingLocation,
      allocation: 'x',
      message: /exclude each other/,
    },
  ];

  it.each(rejections)('rejects $name, saying why', ({ spec: s, reason, allocation, message }) => {
    const result = planFor(job, s);
    expect(result.ok).toBe(false);
    const rejection = (result as { rejection: PlanRejection }).rejection;
    expect(rejection.allocation).toBe(allocation);
    expect(rejection.message).toMatch(message);
    expect(rejection.reasons).toEqual([
      { plugin: SPEC_PLAN, reason, message: rejection.message, gpus: null },
    ]);
  });
});
