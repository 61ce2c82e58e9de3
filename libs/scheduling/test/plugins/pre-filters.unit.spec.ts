import { describe, expect, it } from 'vitest';
import {
  type GangRequest,
  nodeLimitsPreFilter,
  NodeLimitsReason,
  type PreFilterPlugin,
  requestShapePreFilter,
  RequestShapeReason,
} from '../../src';
import { ctxOf, gpus, oneHost } from '../fixtures';

const snapshot = oneHost(gpus(8));
const U = 'UnschedulableAndUnresolvable';

const tables: [PreFilterPlugin, [string, Partial<GangRequest>, string][]][] = [
  [
    requestShapePreFilter,
    [
      ['a plain request', { gpuCount: 8 }, 'Success'],
      ['zero GPUs', { gpuCount: 0 }, RequestShapeReason.InvalidRequest],
      ['fractional GPUs', { gpuCount: 1.5 }, RequestShapeReason.InvalidRequest],
      ['not whole ranks', { gpuCount: 6, gpusPerRank: 4 }, RequestShapeReason.InvalidRequest],
      [
        'per-node min above max',
        { gpuCount: 8, gpusPerNode: { min: 8, max: 4 } },
        RequestShapeReason.InvalidRequest,
      ],
      [
        'per-node min above any host',
        { gpuCount: 64, gpusPerNode: { min: 64, max: 64 } },
        RequestShapeReason.InvalidRequest,
      ],
      ['zero max nodes', { gpuCount: 8, maxNodes: 0 }, RequestShapeReason.InvalidRequest],
      ['bad CUDA range', { gpuCount: 1, cudaRange: 'twelve' }, RequestShapeReason.InvalidRequest],
      ['valid ROCm range', { gpuCount: 1, rocmRange: '^6.1' }, 'Success'],
      [
        'zero-FLOP workload',
        { gpuCount: 1, workload: { precision: 'bf16', flopPerStepPerGpu: 0, allReduceBytes: 1 } },
        RequestShapeReason.InvalidRequest,
      ],
    ],
  ],
  [
    nodeLimitsPreFilter,
    [
      ['fits one node', { gpuCount: 8 }, 'Success'],
      [
        'max nodes too small for per-node max',
        { gpuCount: 16, maxNodes: 2, gpusPerNode: { min: 1, max: 4 } },
        NodeLimitsReason.MaxNodesTooSmall,
      ],
      [
        'gang smaller than one node minimum',
        { gpuCount: 2, gpusPerNode: { min: 4, max: 8 } },
        NodeLimitsReason.BelowPerNodeMinimum,
      ],
      [
        'rank larger than a node',
        { gpuCount: 8, gpusPerRank: 8, gpusPerNode: { min: 1, max: 4 } },
        NodeLimitsReason.RankDoesNotFitNode,
      ],
      ['more GPUs than the cluster has', { gpuCount: 9 }, NodeLimitsReason.ClusterTooSmall],
    ],
  ],
];

describe.each(tables.map(([p, c]) => [p.name, p, c] as const))('%s pre-filter', (_n, plugin, cases) => {
  it.each(cases)('%s', (_name, request, expected) => {
    const st = plugin.preFilter(ctxOf(snapshot, request));
    if (expected === 'Success') expect(st.code, st.message).toBe('Success');
    else expect([st.code, st.reason, st.plugin]).toEqual([U, expected, plugin.name]);
  });
});

describe('node-limits explains with numbers', () => {
  it('says how many GPUs max_nodes can hold', () => {
    const st = nodeLimitsPreFilter.preFilter(
      ctxOf(snapshot, { gpuCount: 16, maxNodes: 2, gpusPerNode: { min: 1, max: 4 } }),
    );
    expect(st.message).toBe('16 GPUs asked but max_nodes 2 × at most 4 per node holds 8');
  });
});
