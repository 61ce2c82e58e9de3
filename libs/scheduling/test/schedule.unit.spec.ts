import { describe, expect, it } from 'vitest';
import {
  type AssemblerPlugin,
  createRegistry,
  createSnapshot,
  type EnsembleRequest,
  FrameworkReason,
  GANG_ASSEMBLY,
  GangAssemblyReason,
  type GangRequest,
  gangRequest,
  schedule,
  scheduleGang,
  type ScheduleResult,
  singleGang,
  verifyPlacement,
} from '../src';
import { cluster, GB, gpus, host, provider, site } from './fixtures';

const placed = (r: ScheduleResult) => {
  if (r.code !== 'Success') throw new Error(`${r.code}: ${r.message}`);
  return r.placement;
};
const hostsOf = (r: ScheduleResult): string[] =>
  placed(r).allocations.flatMap((a) => a.nodes.map((n) => n.hostId));
const countsOf = (r: ScheduleResult): number[] =>
  placed(r).allocations.flatMap((a) => a.nodes.map((n) => n.gpuUuids.length));

/** Schedules one gang and checks the result against every hard constraint. */
const run = (
  snapshot: ReturnType<typeof createSnapshot>,
  req: Partial<GangRequest> & { gpuCount: number },
  seed = 1,
) => {
  const gang = gangRequest(req);
  const r = scheduleGang(snapshot, 'job', gang, { seed });
  if (r.code === 'Success')
    expect(verifyPlacement(snapshot, singleGang('job', gang), r.placement)).toEqual([]);
  return r;
};

describe('placement objective', () => {
  const s = createSnapshot(
    cluster(
      [
        provider('nv', [host('nv8', 'a', gpus(8))], { policy: { defaultPricePerGpuHourMinor: 1_500_000 } }),
        provider('pc', [host('pc4a', 'a', gpus(4, 'A100-40G')), host('pc4b', 'a', gpus(4, 'A100-40G'))]),
        provider('far', [host('far8', 'b', gpus(8))], { policy: { defaultPricePerGpuHourMinor: 500_000 } }),
        provider('h100', [host('h100x2', 'a', gpus(2, 'H100-SXM'))], {
          policy: { defaultPricePerGpuHourMinor: 3_000_000 },
        }),
      ],
      [site('a'), site('b')],
    ),
  );

  it('one GPU: the fastest GPU wins over cheaper slower ones', () => {
    expect(hostsOf(run(s, { gpuCount: 1 }))).toEqual(['h100x2']);
  });

  it('8 GPUs: one NVLink host beats two PCIe hosts', () => {
    const r = run(s, { gpuCount: 8, models: ['A100-80G', 'A100-40G'] });
    expect(hostsOf(r)).toHaveLength(1);
    expect(placed(r).allocations[0]!.prediction.intraSiteUs).toBe(0);
  });

  it('equal step times: the cheaper host wins', () => {
    expect(hostsOf(run(s, { gpuCount: 8, models: ['A100-80G'] }))).toEqual(['far8']);
  });

  it('16 GPUs: one site and its LAN before the wide area', () => {
    const r = run(s, { gpuCount: 16, mixedModels: true, models: ['A100-80G', 'A100-40G'] });
    expect(new Set(placed(r).allocations[0]!.nodes.map((n) => n.siteId))).toEqual(new Set(['a']));
    expect(countsOf(r).reduce((x, y) => x + y)).toBe(16);
  });

  it('any: the cheapest GPUs even when slower', () => {
    const r = run(s, { gpuCount: 2, placement: 'any' });
    expect(placed(r).allocations[0]!.pricePerHourMinor).toBe(2 * 500_000);
  });

  it('spread: as many nodes as allowed', () => {
    const r = run(s, { gpuCount: 4, placement: 'spread', mixedModels: true, maxNodes: 4 });
    expect(hostsOf(r)).toHaveLength(4);
    expect(countsOf(r)).toEqual([1, 1, 1, 1]);
  });

  it('gpus per rank and per-node limits shape the nodes', () => {
    const r = run(s, { gpuCount: 8, gpusPerRank: 2, gpusPerNode: { min: 4, max: 4 }, models: ['A100-40G'] });
    expect(countsOf(r)).toEqual([4, 4]);
    expect(placed(r).allocations[0]!.nodes.map((n) => n.ranks)).toEqual([2, 2]);
  });
});

describe('hard constraints', () => {
  const s = createSnapshot(
    cluster(
      [
        provider('p0', [host('a0', 'a', gpus(8)), host('a1', 'a', gpus(8))], {
          policy: { maxGpusPerJob: 8 },
        }),
        provider('p1', [host('a2', 'a', gpus(4))]),
        provider('p2', [host('b0', 'b', gpus(8))]),
        provider('p3', [host('h0', 'a', gpus(4, 'H100-SXM'))]),
      ],
      [site('a', { lanRttUs: 50 }), site('b')],
      { siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 10e9, rttUs: 30_000 }] },
    ),
  );

  it('a provider per-job cap spreads the gang over providers', () => {
    const r = run(s, { gpuCount: 16, models: ['A100-80G'] });
    const byProvider = new Map<string, number>();
    for (const n of placed(r).allocations[0]!.nodes)
      byProvider.set(n.providerId, (byProvider.get(n.providerId) ?? 0) + n.gpuUuids.length);
    expect(byProvider.get('p0')).toBeLessThanOrEqual(8);
  });

  it('max RTT keeps the gang inside one site', () => {
    const r = run(s, {
      gpuCount: 12,
      models: ['A100-80G'],
      interconnect: { minBandwidthBps: null, maxRttUs: 1000, sameSite: false },
    });
    expect(placed(r).allocations[0]!.maxPairRttUs).toBeLessThanOrEqual(1000);
  });

  it('mixed models only when allowed', () => {
    const no = run(s, {
      gpuCount: 16,
      interconnect: { minBandwidthBps: null, maxRttUs: 1000, sameSite: false },
    });
    expect(no.code).toBe('UnschedulableAndUnresolvable');
    const yes = run(s, {
      gpuCount: 16,
      mixedModels: true,
      interconnect: { minBandwidthBps: null, maxRttUs: 1000, sameSite: false },
    });
    expect(new Set(placed(yes).allocations[0]!.nodes.map((n) => n.siteId))).toEqual(new Set(['a']));
  });
});

describe('unschedulable results explain themselves', () => {
  const ai = { policy: { subnets: ['public', 'ai'] } };
  const s = createSnapshot(
    cluster(
      [
        provider('p0', [host('x0', 'a', gpus(4))], ai),
        provider('p1', [host('x1', 'a', gpus(2))], ai),
        provider('p2', [host('x2', 'a', gpus(2))], ai),
        provider('p3', [host('x3', 'a', gpus(8, 'RTX-4090'))], ai),
        provider('p4', [host('x4', 'a', gpus(8))]),
      ],
      [site('a')],
    ),
  );
  const ask = { minVramBytes: 40 * GB, subnet: 'ai' };

  it('the issue example: too many nodes needed', () => {
    const r = run(s, { gpuCount: 8, maxNodes: 2, ...ask });
    expect(r.code).toBe('UnschedulableAndUnresolvable');
    if (r.code === 'Success') return;
    expect(r.message).toBe(
      "8 GPUs asked; 8 match ≥ 40 GB, in subnet 'ai'; the best set needs 3 nodes but max_nodes is 2",
    );
    expect(r.reasons[0]).toMatchObject({
      plugin: GANG_ASSEMBLY,
      reason: GangAssemblyReason.MaxNodesExceeded,
    });
    expect(r.reasons).toContainEqual(
      expect.objectContaining({ plugin: 'subnet', reason: 'NotInSubnet', gpus: 8 }),
    );
    expect(r.reasons).toContainEqual(
      expect.objectContaining({ plugin: 'vram', reason: 'InsufficientVram', gpus: 8 }),
    );
  });

  it('too few matching GPUs, some of them busy: Unschedulable (waiting helps)', () => {
    const busy = createSnapshot(
      cluster(
        [
          provider(
            'p0',
            [host('x0', 'a', [...gpus(2), ...gpus(2, 'A100-80G', { reservedBy: 'other' })])],
            ai,
          ),
        ],
        [site('a')],
      ),
    );
    const r = run(busy, { gpuCount: 4, ...ask });
    expect(r.code).toBe('Unschedulable');
    if (r.code === 'Success') return;
    expect(r.message).toBe("4 GPUs asked; only 2 match ≥ 40 GB, in subnet 'ai' (2 more are busy)");
    expect(r.reasons).toContainEqual(expect.objectContaining({ reason: FrameworkReason.GpusBusy, gpus: 2 }));
  });

  it('untrusted GPUs: the sentence says which rule left them out and why', () => {
    const mixed = createSnapshot(
      cluster(
        [
          provider('sim', [host('x-sim', 'a', gpus(2, 'A100-80G', { simulated: true }))]),
          provider('liar', [
            host(
              'x-liar',
              'a',
              gpus(2, 'A100-80G', {
                verification: 'unverified',
                verificationNote: 'challenge c-9 failed (late)',
              }),
            ),
          ]),
          provider('ok', [host('x-ok', 'a', gpus(1, 'A100-80G', { verification: 'verified' }))]),
        ],
        [site('a')],
      ),
    );
    const trust = { simulatedGpus: 'refused', verifiedGpus: 'required', setBy: "subnet 'live'" } as const;
    const r = run(mixed, { gpuCount: 2, trust });
    // Not even with every GPU free; the scheduler still waits (a challenge may pass later).
    expect(r.code).toBe('UnschedulableAndUnresolvable');
    if (r.code === 'Success') return;
    expect(r.message).toBe(
      "2 GPUs asked; only 1 match not simulated, verified; free GPUs left out: 2 by simulated-gpus (simulated GPUs refused by subnet 'live'), 2 by verified-gpus (unverified: challenge c-9 failed (late); verified GPUs required by subnet 'live')",
    );
    expect(r.reasons).toContainEqual(
      expect.objectContaining({ plugin: 'simulated-gpus', reason: 'SimulatedRefused', gpus: 2 }),
    );
    expect(r.reasons).toContainEqual(
      expect.objectContaining({ plugin: 'verified-gpus', reason: 'Unverified', gpus: 2 }),
    );
    // The same cluster trusting every GPU places the job.
    expect(run(mixed, { gpuCount: 2 }).code).toBe('Success');
  });

  it('no such GPUs at all: UnschedulableAndUnresolvable', () => {
    const r = run(s, { gpuCount: 4, models: ['H100-SXM'] });
    expect(r.code).toBe('UnschedulableAndUnresolvable');
    if (r.code !== 'Success') expect(r.message).toBe('4 GPUs asked; only 0 match model H100-SXM');
  });

  it('no single model', () => {
    const r = run(s, { gpuCount: 12, subnet: 'ai' });
    if (r.code === 'Success') throw new Error('placed');
    expect(r.message).toMatch(
      /no single model has 12 \(most: (A100-80G|RTX-4090) with 8\) and the job does not mix models/,
    );
  });

  it('interconnect: the largest connected set', () => {
    const two = createSnapshot(
      cluster(
        [provider('p0', [host('a0', 'a', gpus(8))]), provider('p1', [host('b0', 'b', gpus(8))])],
        [site('a'), site('b')],
        {
          defaultWanRttUs: 40_000,
        },
      ),
    );
    const r = run(two, {
      gpuCount: 16,
      interconnect: { minBandwidthBps: null, maxRttUs: 2000, sameSite: false },
    });
    if (r.code === 'Success') throw new Error('placed');
    expect(r.message).toBe(
      '16 GPUs asked; 16 match; no set of nodes within 2 ms RTT of each other holds 16: the largest found holds 8',
    );
  });

  it('an invalid request: UnschedulableAndUnresolvable from the pre-filter', () => {
    const r = run(s, { gpuCount: 6, gpusPerRank: 4 });
    expect(r).toMatchObject({
      code: 'UnschedulableAndUnresolvable',
      reasons: [{ plugin: 'request-shape', reason: 'InvalidRequest' }],
    });
  });

  it('a plugin that throws is an Error, not a crash', () => {
    const broken: AssemblerPlugin = {
      name: 'broken',
      assemble: () => {
        throw new Error('boom');
      },
    };
    const r = scheduleGang(s, 'job', gangRequest({ gpuCount: 1 }), {
      seed: 1,
      registry: createRegistry({ assembler: broken }),
    });
    expect(r).toMatchObject({ code: 'Error', reasons: [{ plugin: 'broken', reason: 'PluginFailed' }] });
  });
});

describe('ensembles: all or nothing', () => {
  const s = createSnapshot(
    cluster(
      [
        provider('a', [host('a0', 'sa', gpus(8)), host('a1', 'sa', gpus(8))]),
        provider('b', [host('b0', 'sb', gpus(8, 'H100-SXM')), host('b1', 'sb', gpus(4, 'L40S'))]),
        provider('c', [host('c0', 'sc', gpus(2, 'L40S'))]),
      ],
      [
        site('sa', { coordinates: { x: 0, y: 0, height: 100 } }),
        site('sb', { coordinates: { x: 40_000, y: 0, height: 100 } }),
        site('sc', { coordinates: { x: 1_000, y: 0, height: 100 } }),
      ],
    ),
  );
  const ensemble = (edgeRtt: number | null, serverModels = ['L40S']): EnsembleRequest => ({
    id: 'job',
    allocations: [
      gangRequest({ name: 'trainer', gpuCount: 8, models: ['A100-80G', 'H100-SXM'] }),
      gangRequest({ name: 'server', gpuCount: 2, models: serverModels }),
    ],
    edgeConstraints: [{ between: ['server', 'trainer'], maxRttUs: edgeRtt, minBandwidthBps: null }],
  });

  it('places every allocation and honours edge constraints', () => {
    const req = ensemble(5_000);
    const r = schedule(s, req, { seed: 1 });
    const p = placed(r);
    expect(p.allocations.map((a) => a.name)).toEqual(['trainer', 'server']);
    expect(verifyPlacement(s, req, p)).toEqual([]);
  });

  it('backtracks: the trainer gives up the fastest GPUs to sit next to the only server GPUs', () => {
    const far = createSnapshot(
      cluster(
        [
          provider('a', [host('a0', 'sa', gpus(8))]),
          provider('b', [host('b0', 'sb', gpus(8, 'H100-SXM'))]),
          provider('c', [host('c0', 'sc', gpus(2, 'L40S'))]),
        ],
        [
          site('sa', { coordinates: { x: 0, y: 0, height: 100 } }),
          site('sb', { coordinates: { x: 40_000, y: 0, height: 100 } }),
          site('sc', { coordinates: { x: 1_000, y: 0, height: 100 } }),
        ],
      ),
    );
    const req = ensemble(5_000);
    // Alone, the trainer takes the H100s at sb.
    expect(hostsOf(scheduleGang(far, 'job', req.allocations[0]!, { seed: 1 }))).toEqual(['b0']);
    const r = schedule(far, req, { seed: 1 });
    expect(placed(r).allocations.map((a) => a.nodes[0]!.hostId)).toEqual(['a0', 'c0']);
    expect(verifyPlacement(far, req, placed(r))).toEqual([]);
  });

  it('nothing is placed when one allocation cannot be', () => {
    const req = ensemble(10, ['L40S']);
    const r = schedule(s, req, { seed: 1 });
    expect(r.code).toBe('Unschedulable');
    if (r.code === 'Success') return;
    expect(r.allocation).toBe('server');
    expect(r.message).toBe(
      "allocation 'server': 2 GPUs asked; only 0 match model L40S (6 more fail an edge constraint)",
    );
    expect(r.reasons).toContainEqual(
      expect.objectContaining({ reason: FrameworkReason.EdgeConstraintUnsatisfied, gpus: 6 }),
    );
  });

  it('rejects a malformed ensemble', () => {
    const r = schedule(
      s,
      {
        ...ensemble(null),
        edgeConstraints: [{ between: ['trainer', 'ghost'], maxRttUs: 1, minBandwidthBps: null }],
      },
      { seed: 1 },
    );
    expect(r).toMatchObject({ code: 'UnschedulableAndUnresolvable', allocation: null });
  });
});

describe('determinism', () => {
  const s = createSnapshot(
    cluster(
      Array.from({ length: 12 }, (_, i) => provider(`p${i}`, [host(`h${i}`, `s${i % 3}`, gpus(8))])),
      [site('s0'), site('s1'), site('s2')],
    ),
  );
  const gang = gangRequest({ gpuCount: 4 });

  it('the same (snapshot, request, seed) gives the same placement', () => {
    const a = scheduleGang(s, 'job', gang, { seed: 42 });
    const b = scheduleGang(s, 'job', gang, { seed: 42 });
    expect(b).toEqual(a);
  });

  it('the seed breaks ties between identical hosts', () => {
    const chosen = new Set(
      Array.from({ length: 20 }, (_, seed) => hostsOf(scheduleGang(s, 'job', gang, { seed }))[0]),
    );
    expect(chosen.size).toBeGreaterThan(3);
  });

  it.each(['pack', 'spread', 'any'] as const)(
    '%s: the more reliable provider wins among identical hosts, whatever the seed',
    (placement) => {
      const scored = createSnapshot(
        cluster(
          Array.from({ length: 12 }, (_, i) =>
            provider(`p${i}`, [host(`h${i}`, `s${i % 3}`, gpus(8))], {
              policy: i === 7 ? { reliability: 0.95 } : i === 3 ? {} : { reliability: 0.5 },
            }),
          ),
          [site('s0'), site('s1'), site('s2')],
        ),
      );
      const one = gangRequest({ gpuCount: 4, maxNodes: 1, placement });
      for (let seed = 0; seed < 20; seed++) {
        const r = scheduleGang(scored, 'job', one, { seed, explain: true });
        expect(hostsOf(r)).toEqual(['h7']);
      }
      // Unscored (p3) counts as the default 0.8: it beats 0.5 once p7 is gone.
      const without7 = createSnapshot(
        cluster(
          Array.from({ length: 12 }, (_, i) => i)
            .filter((i) => i !== 7)
            .map((i) =>
              provider(`p${i}`, [host(`h${i}`, `s${i % 3}`, gpus(8))], {
                policy: i === 3 ? {} : { reliability: 0.5 },
              }),
            ),
          [site('s0'), site('s1'), site('s2')],
        ),
      );
      expect(hostsOf(scheduleGang(without7, 'job', one, { seed: 3 }))).toEqual(['h3']);
    },
  );

  it('an alternative that lost on reliability says so', () => {
    const two = createSnapshot(
      cluster(
        [
          provider('low', [host('h-low', 's0', gpus(1))], { policy: { reliability: 0.2 } }),
          provider('high', [host('h-high', 's0', gpus(1))], { policy: { reliability: 0.9 } }),
        ],
        [site('s0')],
      ),
    );
    const r = scheduleGang(two, 'job', gangRequest({ gpuCount: 1 }), { seed: 1, explain: true });
    expect(hostsOf(r)).toEqual(['h-high']);
    if (r.code !== 'Success') throw new Error(r.message);
    const alt = r.explanation!.allocations[0]!.alternatives[0]!;
    expect(alt.lostOn).toBe('tie-break');
    expect(alt.message).toBe(
      'equal on every other count, but its providers are less reliable (0.20 vs 0.90)',
    );
  });

  it('a sampled search of a large pool still finds the one host that fits', () => {
    const big = createSnapshot(
      cluster(
        [
          ...Array.from({ length: 60 }, (_, i) => provider(`p${i}`, [host(`h${i}`, `s${i}`, gpus(2))])),
          provider('only', [host('only8', 's7', gpus(8))]),
        ],
        Array.from({ length: 60 }, (_, i) => site(`s${i}`)),
      ),
    );
    for (const seed of [1, 2, 3]) {
      const r = scheduleGang(big, 'job', gangRequest({ gpuCount: 8, maxNodes: 1 }), {
        seed,
        minHostsToScore: 5,
      });
      expect(hostsOf(r)).toEqual(['only8']);
    }
  });
});
