import { describe, expect, it } from 'vitest';
import {
  binPackingScore,
  gangRequest,
  gpuThroughputScore,
  intraHostBandwidthScore,
  priceScore,
  type ScoredHost,
  type ScorePlugin,
} from '../../src';
import { ctxOf, firstHost, gpu, oneHost } from '../fixtures';

/** A host as score plugins see it, from speeds/prices/free counts. */
const scored = (speeds: number[], prices: number[], freeGpus: number, intraBps = 2e11): ScoredHost => {
  const s = oneHost([gpu()], {}, { intraHost: { kind: 'pcie', bandwidthBps: intraBps, latencyUs: 8 } });
  const { host, provider, gpus } = firstHost(s);
  return { host, provider, gpus: speeds.map(() => gpus[0]!), speeds, prices, freeGpus };
};

const ctx = (gpuCount: number, gpusPerNode: { min: number; max: number } | null = null) =>
  ctxOf(oneHost([gpu()]), gangRequest({ gpuCount, gpusPerNode }));

const tables: [ScorePlugin, 'higher' | 'lower', [string, ReturnType<typeof ctx>, ScoredHost, number][]][] = [
  [
    gpuThroughputScore,
    'higher',
    [
      ['slowest of the GPUs the gang would take', ctx(2), scored([300, 200, 100], [1, 1, 1], 3), 200],
      ['all it has when the gang is larger', ctx(8), scored([300, 200], [1, 1], 2), 200],
      ['a single GPU job takes the fastest', ctx(1), scored([300, 200], [1, 1], 2), 300],
    ],
  ],
  [
    priceScore,
    'lower',
    [
      ['mean price of what the gang would take', ctx(2), scored([1, 1, 1], [10, 20, 90], 3), 15],
      ['all prices when the gang is larger', ctx(4), scored([1, 1], [10, 30], 2), 20],
    ],
  ],
  [
    binPackingScore,
    'lower',
    [
      ['free GPUs left after a 1-GPU job', ctx(1), scored([1, 1], [1, 1], 8), 7],
      ['a host the job fills exactly', ctx(4), scored([1, 1, 1, 1], [1, 1, 1, 1], 4), 0],
      [
        'capped by the per-node maximum',
        ctx(16, { min: 1, max: 8 }),
        scored(Array(8).fill(1), Array(8).fill(1), 8),
        0,
      ],
      ['unusable free GPUs count as left over', ctx(2), scored([1, 1], [1, 1], 6), 4],
    ],
  ],
  [
    intraHostBandwidthScore,
    'higher',
    [
      ['NVLink', ctx(8), scored([1], [1], 1, 3.6e12), 3.6e12],
      ['PCIe', ctx(8), scored([1], [1], 1, 2e11), 2e11],
    ],
  ],
];

describe.each(tables.map(([p, b, c]) => [p.name, p, b, c] as const))(
  '%s score',
  (_n, plugin, better, cases) => {
    it(`prefers ${better} raw values`, () => expect(plugin.better).toBe(better));
    it.each(cases)('%s', (_name, c, h, expected) => expect(plugin.score(c, h)).toBe(expected));
  },
);
