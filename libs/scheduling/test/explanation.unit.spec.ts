import { describe, expect, it } from 'vitest';
import {
  type AllocationExplanation,
  type ClusterSnapshotInput,
  createSnapshot,
  type GangRequest,
  gangRequest,
  type LossReason,
  MAX_LINK_FIGURES,
  schedule,
  scheduleGang,
} from '../src';
import { cluster, gpus, host, provider, site } from './fixtures';

const MEASURED_AT = '2026-12-03T10:00:00.000Z';

const explainOne = (
  input: ClusterSnapshotInput,
  req: Partial<GangRequest> & { gpuCount: number },
): AllocationExplanation => {
  const r = scheduleGang(createSnapshot(input), 'job', gangRequest(req), { seed: 1, explain: true });
  if (r.code !== 'Success') throw new Error(`${r.code}: ${r.message}`);
  expect(r.explanation?.id).toBe('job');
  return r.explanation!.allocations[0]!;
};

const chosenHosts = (e: AllocationExplanation): string[] => e.placement.nodes.map((n) => n.hostId);

/** Two sites 80 ms apart (measured); site a's two hosts are dearer than b's one. */
const twoSites = cluster(
  [
    provider('pa', [host('a0', 'a', gpus(4)), host('a1', 'a', gpus(4))]),
    provider('pb', [host('b0', 'b', gpus(4))], { policy: { defaultPricePerGpuHourMinor: 600_000 } }),
  ],
  [site('a'), site('b')],
  { siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 10e9, rttUs: 80_200, measuredAt: MEASURED_AT }] },
);

describe('alternatives: the best gangs not chosen, and the rule each lost on', () => {
  const cases: {
    name: string;
    input: ClusterSnapshotInput;
    request: Partial<GangRequest> & { gpuCount: number };
    chosen: string[];
    lost: { hosts: string[]; on: LossReason; message: RegExp };
  }[] = [
    {
      name: 'pack: the slower GPU lost on step time',
      input: cluster(
        [
          provider('fast', [host('h100', 'a', gpus(1, 'H100-SXM'))]),
          provider('slow', [host('a100', 'a', gpus(1))]),
        ],
        [site('a')],
      ),
      request: { gpuCount: 1 },
      chosen: ['h100'],
      lost: { hosts: ['a100'], on: 'slower', message: /^slower: .* per step vs .* \(\+\d+%; compute/ },
    },
    {
      name: 'pack: as fast, the dearer host lost on price',
      input: cluster(
        [
          provider('cheap', [host('c0', 'a', gpus(1))], { policy: { defaultPricePerGpuHourMinor: 500_000 } }),
          provider('dear', [host('d0', 'a', gpus(1))]),
        ],
        [site('a')],
      ),
      request: { gpuCount: 1 },
      chosen: ['c0'],
      lost: {
        hosts: ['d0'],
        on: 'pricier',
        message: /^pricier: 1000000 vs 500000 minor units per hour \(\+100%\)$/,
      },
    },
    {
      name: 'any: the cheapest wins even when slower; the faster one lost on price',
      input: cluster(
        [
          provider('fast', [host('h100', 'a', gpus(1, 'H100-SXM'))], {
            policy: { defaultPricePerGpuHourMinor: 3_000_000 },
          }),
          provider('slow', [host('a100', 'a', gpus(1))]),
        ],
        [site('a')],
      ),
      request: { gpuCount: 1, placement: 'any' },
      chosen: ['a100'],
      lost: { hosts: ['h100'], on: 'pricier', message: /^pricier: 3000000 vs 1000000/ },
    },
    {
      name: 'spread: a gang on fewer nodes lost on its node count',
      input: cluster([provider('p', [host('x0', 'a', gpus(2)), host('x1', 'a', gpus(2))])], [site('a')]),
      request: { gpuCount: 2, placement: 'spread' },
      chosen: ['x0', 'x1'],
      lost: { hosts: ['x0'], on: 'fewer-nodes', message: /^spread asked: 1 nodes vs 2$/ },
    },
    {
      name: 'max_rtt: the cheaper wide-area gang broke it, named with its measured RTT',
      input: twoSites,
      request: { gpuCount: 8, interconnect: { minBandwidthBps: null, maxRttUs: 20_000, sameSite: false } },
      chosen: ['a0', 'a1'],
      lost: {
        hosts: ['a0', 'b0'],
        on: 'constraint',
        message: /^RTT 80\.2 ms \(measured\) between a[01] and b0 exceeds max_rtt 20 ms$/,
      },
    },
    {
      name: 'min_bandwidth: the wide-area gang broke it, named with its measured bandwidth',
      input: twoSites,
      request: { gpuCount: 8, interconnect: { minBandwidthBps: 50e9, maxRttUs: null, sameSite: false } },
      chosen: ['a0', 'a1'],
      lost: {
        hosts: ['a0', 'b0'],
        on: 'constraint',
        message: /^bandwidth 10 Gbit\/s \(measured\) between a[01] and b0 is below min_bandwidth 50 Gbit\/s$/,
      },
    },
    {
      name: 'same_site: a gang over two sites broke it',
      input: twoSites,
      request: { gpuCount: 8, interconnect: { minBandwidthBps: null, maxRttUs: null, sameSite: true } },
      chosen: ['a0', 'a1'],
      lost: { hosts: ['a0', 'b0'], on: 'constraint', message: /^spans 2 sites; same_site asked for one$/ },
    },
  ];

  it.each(cases)('$name', ({ input, request, chosen, lost }) => {
    const e = explainOne(input, request);
    expect(chosenHosts(e)).toEqual(chosen);
    const alt = e.alternatives.find(
      (a) => a.lostOn === lost.on && lost.hosts.every((h) => a.nodes.some((n) => n.hostId === h)),
    );
    expect(alt, JSON.stringify(e.alternatives, null, 2)).toBeDefined();
    expect(alt!.message).toMatch(lost.message);
    expect(alt!.stepUsDelta).toBeCloseTo(alt!.prediction.stepUs - e.placement.prediction.stepUs);
    expect(alt!.priceDeltaMinor).toBe(alt!.pricePerHourMinor - e.placement.pricePerHourMinor);
    expect(e.alternatives.length).toBeLessThanOrEqual(3);
    // The chosen gang is never its own alternative.
    expect(e.alternatives.some((a) => a.nodes.map((n) => n.hostId).join() === chosen.join())).toBe(false);
  });

  it('an ensemble member that ranked better alone lost to the ensemble', () => {
    // The trainer (placed first: the larger) ranks the far H100s best; the only server GPU is near.
    const s = createSnapshot(
      cluster(
        [
          provider('far', [host('far', 'b', gpus(2, 'H100-SXM'))]),
          provider('near', [host('near', 'a', gpus(2))]),
          provider('srv', [host('srv', 'a', gpus(1, 'L40S'))]),
        ],
        [site('a'), site('b')],
        { siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 10e9, rttUs: 60_000 }] },
      ),
    );
    const r = schedule(
      s,
      {
        id: 'ens',
        allocations: [
          gangRequest({ name: 'trainer', gpuCount: 2, models: ['H100-SXM', 'A100-80G'] }),
          gangRequest({ name: 'server', gpuCount: 1, models: ['L40S'] }),
        ],
        edgeConstraints: [{ between: ['trainer', 'server'], minBandwidthBps: null, maxRttUs: 1_000 }],
      },
      { seed: 1, explain: true },
    );
    if (r.code !== 'Success') throw new Error(r.message);
    const trainer = r.explanation!.allocations.find((a) => a.placement.name === 'trainer')!;
    expect(chosenHosts(trainer)).toEqual(['near']);
    expect(trainer.alternatives[0]).toMatchObject({ lostOn: 'ensemble', nodes: [{ hostId: 'far' }] });
    expect(r.explanation!.allocations.map((a) => a.placement.name)).toEqual(['trainer', 'server']);
  });
});

describe('alternatives: one per node set (host and GPUs per host), never the chosen nodes', () => {
  /** One site; h1 and h3 hold A100s and H100s, so a gang on them has several ways to take its GPUs. */
  const mixedHosts = cluster(
    [
      provider('p0', [host('h0', 'a', gpus(1))]),
      provider('p1', [host('h1', 'a', [...gpus(2), ...gpus(2, 'H100-SXM')])]),
      provider('p2', [host('h2', 'a', gpus(4))]),
      provider('p3', [host('h3', 'a', [...gpus(2), ...gpus(2, 'H100-SXM')])]),
    ],
    [site('a')],
  );
  const nodeSet = (nodes: readonly { hostId: string; gpus: number }[]): string =>
    nodes
      .map((n) => `${n.hostId}:${n.gpus}`)
      .sort()
      .join(',');

  it.each([
    {
      name: 'spread over 2 GPUs: h0 + h3 was listed twice',
      request: { gpuCount: 2, placement: 'spread' as const },
    },
    {
      name: 'spread over 3 GPUs of one model: the chosen nodes came back as an alternative',
      request: { gpuCount: 3, placement: 'spread' as const },
    },
    {
      name: 'spread over 3 GPUs of mixed models: an alternative was listed twice',
      request: { gpuCount: 3, placement: 'spread' as const, mixedModels: true },
    },
  ])('$name', ({ request }) => {
    const e = explainOne(mixedHosts, request);
    const chosen = nodeSet(e.placement.nodes.map((n) => ({ hostId: n.hostId, gpus: n.gpuUuids.length })));
    const sets = e.alternatives.map((a) => nodeSet(a.nodes));
    expect(sets.length).toBeGreaterThan(0);
    expect(new Set(sets).size, JSON.stringify(sets)).toBe(sets.length);
    expect(sets).not.toContain(chosen);
  });
});

describe('figures: every one the objective used, with its source and age', () => {
  it('GPUs: measured with its date, reference, or assumed when it has no figure; the slowest first', () => {
    const input = cluster(
      [
        provider('p', [
          host('h', 'a', [
            ...gpus(1, 'H100-SXM', { tflopsMeasuredAt: MEASURED_AT }),
            ...gpus(1, 'H100-SXM', { tflopsMeasured: false, tflopsMeasuredAt: MEASURED_AT }),
            ...gpus(1, 'H100-SXM', { tflops: {} }),
          ]),
        ]),
      ],
      [site('a')],
    );
    const e = explainOne(input, { gpuCount: 3 });
    expect(e.gpus.map((g) => [g.source, g.measuredAt, g.slowest])).toEqual([
      ['assumed', null, true],
      ['measured', MEASURED_AT, false],
      ['reference', null, false],
    ]);
    expect(e.gpus[0]!.tflops).toBe(e.placement.prediction.slowestTflops);
    expect(e.gpus[1]).toMatchObject({ precision: 'bf16', hostId: 'h', providerId: 'p', model: 'H100-SXM' });
  });

  const links: {
    name: string;
    hosts: {
      id: string;
      site: string;
      coordinates?: { x: number; y: number; height: number };
      error?: number;
      nic?: number;
    }[];
    network: Parameters<typeof cluster>[2];
    expected: Record<string, unknown>;
  }[] = [
    {
      name: 'a measured host pair, relayed, with its date',
      hosts: [
        { id: 'x', site: 'a' },
        { id: 'y', site: 'b' },
      ],
      network: {
        hostLinks: [
          { a: 'y', b: 'x', bandwidthBps: 2e9, rttUs: 30_000, measuredAt: MEASURED_AT, relayed: true },
        ],
      },
      expected: {
        a: 'x',
        b: 'y',
        scope: 'inter-site',
        rttUs: 30_000,
        rttSource: 'measured',
        bandwidthBps: 2e9,
        bandwidthSource: 'measured',
        basis: 'host-measured',
        measuredAt: MEASURED_AT,
        relayed: true,
        cappedByNic: false,
      },
    },
    {
      name: 'a measured site pair',
      hosts: [
        { id: 'x', site: 'a' },
        { id: 'y', site: 'b' },
      ],
      network: { siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 5e9, rttUs: 12_000, measuredAt: MEASURED_AT }] },
      expected: { basis: 'site-measured', rttSource: 'measured', measuredAt: MEASURED_AT, relayed: false },
    },
    {
      name: 'one LAN',
      hosts: [
        { id: 'x', site: 'a' },
        { id: 'y', site: 'a' },
      ],
      network: {},
      expected: {
        scope: 'intra-site',
        basis: 'site-lan',
        rttSource: 'lan',
        bandwidthSource: 'lan',
        rttUs: 50,
      },
    },
    {
      name: 'coordinates: an estimated RTT with the larger error, the assumed WAN bandwidth',
      hosts: [
        { id: 'x', site: 'a', coordinates: { x: 0, y: 0, height: 0 }, error: 0.1 },
        { id: 'y', site: 'b', coordinates: { x: 3_000, y: 4_000, height: 0 }, error: 0.3 },
      ],
      network: {},
      expected: {
        basis: 'coordinates',
        rttUs: 5_000,
        rttSource: 'estimated',
        bandwidthSource: 'assumed',
        estimateError: 0.3,
        measuredAt: null,
      },
    },
    {
      name: 'nothing known: the defaults, assumed',
      hosts: [
        { id: 'x', site: 'a' },
        { id: 'y', site: 'b' },
      ],
      network: { defaultWanRttUs: 40_000 },
      expected: {
        basis: 'default',
        rttUs: 40_000,
        rttSource: 'assumed',
        bandwidthSource: 'assumed',
        estimateError: null,
      },
    },
    {
      name: "a NIC slower than the link: the NIC's bandwidth, said so",
      hosts: [
        { id: 'x', site: 'a', nic: 1e9 },
        { id: 'y', site: 'b' },
      ],
      network: { siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 5e9, rttUs: 12_000 }] },
      expected: { bandwidthBps: 1e9, bandwidthSource: 'measured', cappedByNic: true, measuredAt: null },
    },
  ];

  it.each(links)('links: $name', ({ hosts, network, expected }) => {
    const input = cluster(
      hosts.map((h) =>
        provider(`p-${h.id}`, [
          host(h.id, h.site, gpus(1), {
            coordinates: h.coordinates ?? null,
            coordinatesError: h.error ?? null,
            nicBandwidthBps: h.nic ?? 100e9,
          }),
        ]),
      ),
      [site('a'), site('b')],
      network,
    );
    // Two one-GPU hosts: spread places one GPU on each, so the pair is the gang's only link.
    const e = explainOne(input, { gpuCount: 2, placement: 'spread' });
    expect(e.links).toHaveLength(1);
    expect(e.links[0]).toMatchObject(expected);
    expect(e.linksOmitted).toBe(0);
  });

  it('stays bounded: a 40-node gang lists at most MAX_LINK_FIGURES pairs, wide-area first', () => {
    const input = cluster(
      Array.from({ length: 40 }, (_, i) =>
        provider(`p${i}`, [host(`h${String(i).padStart(2, '0')}`, i < 20 ? 'a' : 'b', gpus(1))]),
      ),
      [site('a'), site('b')],
    );
    const e = explainOne(input, { gpuCount: 40, maxNodes: 40 });
    expect(e.links).toHaveLength(MAX_LINK_FIGURES);
    expect(e.linksOmitted).toBe((40 * 39) / 2 - MAX_LINK_FIGURES);
    expect(e.links.every((l) => l.scope === 'inter-site')).toBe(true);
    expect(e.gpus.length + e.gpusOmitted).toBe(40);
  });

  it('is computed only when asked', () => {
    const r = scheduleGang(createSnapshot(twoSites), 'job', gangRequest({ gpuCount: 4 }), { seed: 1 });
    expect(r.code).toBe('Success');
    expect('explanation' in r).toBe(false);
  });

  it('the prediction splits the step into compute and communication', () => {
    const e = explainOne(twoSites, { gpuCount: 8 });
    const p = e.placement.prediction;
    expect(p.stepUs).toBeCloseTo(p.computeUs + p.commUs);
    expect(p.commUs).toBeCloseTo(p.intraHostUs + p.intraSiteUs + p.interSiteUs);
    expect(e.strategy).toBe('pack');
    expect(e.stepTimeTolerance).toBe(0.02);
  });
});
