import { describe, expect, it } from 'vitest';
import {
  createSnapshot,
  type GangFilterPlugin,
  gangNetwork,
  type GangRequest,
  type GangView,
  interconnectGangFilter,
  InterconnectReason,
  mixedModelsGangFilter,
  MixedModelsReason,
  nodeShapeGangFilter,
  NodeShapeReason,
} from '../../src';
import { cluster, ctxOf, gpus, host, provider, site } from '../fixtures';

// Three hosts: h0 and h1 at site a (LAN 100 Gbit/s, 50 µs), h2 at site b (WAN 10 Gbit/s, 40 ms).
const snapshot = createSnapshot(
  cluster(
    [
      provider('p0', [host('h0', 'a', gpus(8)), host('h1', 'a', gpus(4, 'H100-SXM'))], {
        policy: { maxGpusPerJob: 10 },
      }),
      provider('p1', [host('h2', 'b', gpus(8))]),
    ],
    [site('a'), site('b')],
  ),
);
const inv = snapshot.inventory;

/** A gang view taking the first `n` GPUs of each named host. */
const gang = (nodes: [string, number][]): GangView => {
  const hs = nodes.map(([id]) => inv.hostById.get(id)!);
  const list = nodes.map(([, n], i) => {
    const h = inv.hosts[hs[i]!]!;
    return {
      host: h,
      provider: inv.providers[h.providerIndex]!,
      gpus: inv.gpus.slice(h.gpuStart, h.gpuStart + n),
    };
  });
  return { nodes: list, gpuCount: nodes.reduce((s, [, n]) => s + n, 0), network: gangNetwork(inv, hs) };
};

const tables: [GangFilterPlugin, [string, Partial<GangRequest>, [string, number][], string][]][] = [
  [
    nodeShapeGangFilter,
    [
      [
        'exact shape',
        { gpuCount: 12, gpusPerNode: { min: 4, max: 8 } },
        [
          ['h0', 8],
          ['h2', 4],
        ],
        'Success',
      ],
      ['wrong total', { gpuCount: 12 }, [['h0', 8]], NodeShapeReason.ShapeViolated],
      [
        'node under the minimum',
        { gpuCount: 10, gpusPerNode: { min: 4, max: 8 } },
        [
          ['h0', 8],
          ['h2', 2],
        ],
        NodeShapeReason.ShapeViolated,
      ],
      [
        'not whole ranks',
        { gpuCount: 12, gpusPerRank: 4 },
        [
          ['h0', 6],
          ['h2', 6],
        ],
        NodeShapeReason.ShapeViolated,
      ],
      [
        'too many nodes',
        { gpuCount: 12, maxNodes: 1 },
        [
          ['h0', 8],
          ['h2', 4],
        ],
        NodeShapeReason.ShapeViolated,
      ],
      [
        'provider per-job cap',
        { gpuCount: 12 },
        [
          ['h0', 8],
          ['h1', 4],
        ],
        NodeShapeReason.ShapeViolated,
      ],
      [
        'same host twice',
        { gpuCount: 8 },
        [
          ['h0', 4],
          ['h0', 4],
        ],
        NodeShapeReason.ShapeViolated,
      ],
    ],
  ],
  [
    interconnectGangFilter,
    [
      [
        'one node needs no network',
        { gpuCount: 8, interconnect: { minBandwidthBps: 1e15, maxRttUs: 1, sameSite: true } },
        [['h0', 8]],
        'Success',
      ],
      [
        'LAN pair within limits',
        { gpuCount: 12, interconnect: { minBandwidthBps: 100e9, maxRttUs: 50, sameSite: true } },
        [
          ['h0', 8],
          ['h1', 4],
        ],
        'Success',
      ],
      [
        'two sites when one is required',
        { gpuCount: 12, interconnect: { minBandwidthBps: null, maxRttUs: null, sameSite: true } },
        [
          ['h0', 8],
          ['h2', 4],
        ],
        InterconnectReason.NotSameSite,
      ],
      [
        'WAN bandwidth too low',
        { gpuCount: 12, interconnect: { minBandwidthBps: 25e9, maxRttUs: null, sameSite: false } },
        [
          ['h0', 8],
          ['h2', 4],
        ],
        InterconnectReason.BandwidthTooLow,
      ],
      [
        'WAN RTT too high',
        { gpuCount: 12, interconnect: { minBandwidthBps: null, maxRttUs: 10_000, sameSite: false } },
        [
          ['h0', 8],
          ['h2', 4],
        ],
        InterconnectReason.RttTooHigh,
      ],
    ],
  ],
  [
    mixedModelsGangFilter,
    [
      [
        'one model',
        { gpuCount: 12 },
        [
          ['h0', 8],
          ['h2', 4],
        ],
        'Success',
      ],
      [
        'two models not allowed',
        { gpuCount: 12 },
        [
          ['h0', 8],
          ['h1', 4],
        ],
        MixedModelsReason.ModelsMixed,
      ],
      [
        'two models allowed',
        { gpuCount: 12, mixedModels: true },
        [
          ['h0', 8],
          ['h1', 4],
        ],
        'Success',
      ],
    ],
  ],
];

describe.each(tables.map(([p, c]) => [p.name, p, c] as const))('%s gang filter', (_n, plugin, cases) => {
  it.each(cases)('%s', (_name, request, nodes, expected) => {
    const st = plugin.filterGang(ctxOf(snapshot, request), gang(nodes));
    if (expected === 'Success') expect(st.code, st.message).toBe('Success');
    else expect([st.code, st.reason, st.plugin]).toEqual(['Error', expected, plugin.name]);
  });
});
