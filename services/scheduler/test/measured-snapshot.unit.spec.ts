import type { CandidateProvider } from '@gpunet/contracts';
import { createSnapshot, gangRequest, type GangRequest, schedule } from '@gpunet/scheduling';
import { describe, expect, it } from 'vitest';
import { MEASURED_TFLOPS, MeasuredTflopsReason } from '../src/domain/measured-tflops.filter';
import {
  type CoordinateRow,
  type LinkRow,
  type Measurements,
  NO_MEASUREMENTS,
  pairLinks,
  type ProfileRow,
} from '../src/domain/measurements';
import { DEFAULT_NETWORK, referenceTflops, snapshotInput } from '../src/domain/placement-input';
import { placementRegistry } from '../src/domain/placement-registry';
import { candidate, edgeId } from './support/fixtures';

const NOW = Date.parse('2030-01-01T12:00:00.000Z');
const HOUR = 3_600_000;
const [A1, A2, B, C] = [edgeId('A1'), edgeId('A2'), edgeId('B'), edgeId('C')];

const profile = (providerId: string, over: Partial<ProfileRow> = {}): ProfileRow => ({
  providerId,
  simulated: false,
  measuredAtMs: NOW - HOUR,
  expiresAtMs: NOW + HOUR,
  gpus: [0, 1].map((i) => ({
    index: i,
    uuid: `GPU-${providerId.slice(1, 5)}-${i}`,
    tflops: { fp16: 700, bf16: 690 },
  })),
  peers: [],
  ...over,
});

const link = (a: string, b: string, over: Partial<LinkRow> = {}): LinkRow => ({
  a,
  b,
  rttUs: 80_000,
  throughputBps: 2e9,
  sameSite: false,
  relayed: false,
  measuredAtMs: NOW - HOUR,
  expiresAtMs: NOW + HOUR,
  ...over,
});

const coordinate = (hostId: string, siteId: string, over: Partial<CoordinateRow> = {}): CoordinateRow => ({
  hostId,
  x: 0,
  y: 0,
  height: 100,
  error: 0.2,
  siteId,
  fittedAtMs: NOW - HOUR,
  expiresAtMs: NOW + HOUR,
  ...over,
});

const measured = (m: Partial<Measurements>): Measurements => ({ ...NO_MEASUREMENTS, ...m });

const inputOf = (candidates: CandidateProvider[], m: Partial<Measurements>) =>
  snapshotInput(candidates, [], new Map(), 'job-1', undefined, { measurements: measured(m), atMs: NOW });

const h100Reference = referenceTflops('NVIDIA H100 80GB HBM3');

describe('measured snapshot: GPU figures', () => {
  it('takes an H100 SXM’s reference as its data sheet peak × the typical efficiency', () => {
    expect(h100Reference).toEqual({ fp32: 50.3, tf32: 371, fp16: 742.1, bf16: 742.1 });
    expect(referenceTflops('Acme Fantasy 9000')).toEqual({});
  });

  it.each([
    {
      name: 'a live profile, matched by uuid',
      profile: profile(A1),
      expect: {
        tflops: { fp16: 700, bf16: 690 },
        tflopsMeasured: true,
        tflopsMeasuredAt: '2030-01-01T11:00:00.000Z',
      },
    },
    {
      name: 'a live profile whose runtime hid the uuid, matched by index',
      profile: profile(A1, { gpus: [0, 1].map((i) => ({ index: i, uuid: null, tflops: { fp16: 650 } })) }),
      expect: { tflops: { fp16: 650 }, tflopsMeasured: true },
    },
    {
      name: 'an expired profile: reference figures',
      profile: profile(A1, { expiresAtMs: NOW }),
      expect: { tflops: h100Reference, tflopsMeasured: false, tflopsMeasuredAt: null },
    },
    {
      name: 'a profile that measured another GPU only: reference figures',
      profile: profile(A1, { gpus: [{ index: 7, uuid: 'GPU-other', tflops: { fp16: 1 } }] }),
      expect: { tflops: h100Reference, tflopsMeasured: false },
    },
    {
      name: 'no profile: reference figures',
      profile: undefined,
      expect: { tflops: h100Reference, tflopsMeasured: false, tflopsMeasuredAt: null },
    },
  ])('$name', (c) => {
    const input = inputOf([candidate(A1, 2)], { profiles: new Map(c.profile ? [[A1, c.profile]] : []) });
    expect(input.providers[0]!.hosts[0]!.gpus[0]).toMatchObject(c.expect);
  });
});

describe('measured snapshot: the link inside a host', () => {
  const linked = (peers: number[][], vendor: 'nvidia' | 'amd' = 'nvidia'): CandidateProvider => {
    const c = candidate(A1, peers.length);
    return { ...c, gpus: c.gpus.map((g, i) => ({ ...g, vendor, directPeers: peers[i]! })) };
  };
  it.each([
    {
      name: 'every GPU NVLinked: NVLink at the default',
      c: linked([[1], [0]]),
      p: undefined,
      expect: { kind: 'nvlink', bandwidthBps: DEFAULT_NETWORK.nvlinkBps },
    },
    { name: 'AMD GPUs linked: xGMI', c: linked([[1], [0]], 'amd'), p: undefined, expect: { kind: 'xgmi' } },
    {
      name: 'one GPU without a peer: PCIe',
      c: linked([[1], [0], []]),
      p: undefined,
      expect: { kind: 'pcie', bandwidthBps: DEFAULT_NETWORK.pcieBps },
    },
    {
      name: 'a peer not offered does not count',
      c: linked([[5], [0]]),
      p: undefined,
      expect: { kind: 'pcie' },
    },
    {
      name: 'measured peer copies: the slowest pair among the offered GPUs',
      c: linked([
        [1, 2],
        [0, 2],
        [0, 1],
      ]),
      p: profile(A1, {
        peers: [
          { a: 0, b: 1, bandwidthBps: 3.2e12 },
          { a: 1, b: 2, bandwidthBps: 2.9e12 },
          { a: 0, b: 9, bandwidthBps: 1 },
        ],
      }),
      expect: { kind: 'nvlink', bandwidthBps: 2.9e12 },
    },
  ])('$name', (c) => {
    const input = inputOf([c.c], { profiles: new Map(c.p ? [[A1, c.p]] : []) });
    expect(input.providers[0]!.hosts[0]!.intraHost).toMatchObject(c.expect);
  });
});

describe('measured snapshot: the network', () => {
  it('puts hosts at the sites same-site detection found, each unmeasured one at its own', () => {
    const input = inputOf([candidate(A1, 2), candidate(A2, 2), candidate(B, 2), candidate(C, 2)], {
      coordinates: new Map([
        [A1, coordinate(A1, A1)],
        [A2, coordinate(A2, A1, { x: 300 })],
        [B, coordinate(B, B, { x: 80_000, expiresAtMs: NOW })],
      ]),
    });
    expect(input.providers.map((p) => p.hosts[0]!.siteId)).toEqual([A1, A1, B, C]);
    expect(input.network.sites.map((s) => s.id)).toEqual([A1, B, C]);
    expect(input.providers[1]!.hosts[0]).toMatchObject({
      coordinates: { x: 300, y: 0, height: 100 },
      coordinatesError: 0.2,
    });
    // B's coordinate expired: unknown, like C's.
    expect(
      input.providers.slice(2).map((p) => [p.hosts[0]!.coordinates, p.hosts[0]!.coordinatesError]),
    ).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(input.network.estimatesMeetBounds).toBe(false);
  });

  it.each([
    {
      name: 'both directions: the lower RTT and throughput, the newer time',
      rows: [
        link(A1, B, { rttUs: 80_500, throughputBps: 3e9 }),
        link(B, A1, { rttUs: 80_000, throughputBps: 2e9, measuredAtMs: NOW - 60_000 }),
      ],
      expect: [
        {
          rttUs: 80_000,
          bandwidthBps: 2e9,
          bandwidthMeasured: true,
          measuredAt: '2030-01-01T11:59:00.000Z',
          relayed: false,
        },
      ],
    },
    {
      name: 'RTT only: the WAN bandwidth estimate, marked unmeasured',
      rows: [link(A1, B, { throughputBps: null })],
      expect: [{ rttUs: 80_000, bandwidthBps: DEFAULT_NETWORK.wanBandwidthBps, bandwidthMeasured: false }],
    },
    {
      name: 'RTT only inside one LAN: the LAN estimate',
      rows: [link(A1, B, { throughputBps: null, sameSite: true, rttUs: 300 })],
      expect: [{ rttUs: 300, bandwidthBps: DEFAULT_NETWORK.lanBandwidthBps, bandwidthMeasured: false }],
    },
    {
      name: 'last measured through a relay: the relay path’s figures',
      rows: [
        link(A1, B, { rttUs: 20_000 }),
        link(B, A1, { rttUs: 95_000, throughputBps: 4e8, relayed: true, measuredAtMs: NOW - 1 }),
      ],
      expect: [{ rttUs: 95_000, bandwidthBps: 4e8, relayed: true }],
    },
    {
      name: 'expired: dropped (the pair is an estimate again)',
      rows: [link(A1, B, { expiresAtMs: NOW })],
      expect: [],
    },
    {
      name: 'a link to a provider that is no candidate: left out',
      rows: [link(A1, edgeId('Z'))],
      expect: [],
    },
  ])('host links: $name', (c) => {
    const input = inputOf([candidate(A1, 2), candidate(B, 2)], { links: c.rows });
    expect(input.network.hostLinks).toMatchObject(c.expect);
    expect(input.network.hostLinks).toHaveLength(c.expect.length);
  });

  it('a host measured faster than the default NIC gets its fastest direct transfer as its NIC', () => {
    const input = inputOf([candidate(A1, 2), candidate(A2, 2), candidate(B, 2)], {
      links: [
        link(A1, A2, { rttUs: 300, sameSite: true, throughputBps: 200e9 }),
        link(A1, B, { throughputBps: 400e9, relayed: true }),
        link(B, A2, { throughputBps: 300e9, expiresAtMs: NOW }),
      ],
    });
    expect(input.providers.map((p) => p.hosts[0]!.nicBandwidthBps)).toEqual([
      200e9,
      200e9,
      // Relayed and expired transfers say nothing of B's NIC.
      DEFAULT_NETWORK.nicBandwidthBps,
    ]);
  });

  it('merges an unordered pair once, whatever the order of its rows', () => {
    expect(pairLinks([link(B, A1), link(A1, B)], NOW)).toHaveLength(1);
    expect(pairLinks([link(B, A1), link(A1, B)], NOW)[0]).toMatchObject({ a: A1 < B ? A1 : B });
  });
});

/** The scheduler's pipeline (`placementRegistry`) on a measured snapshot. */
const place = (candidates: CandidateProvider[], m: Partial<Measurements>, gang: GangRequest) => {
  const offered = new Map([[gang.name, new Set(candidates.flatMap((c) => c.gpus.map((g) => g.uuid)))]]);
  return schedule(
    createSnapshot(inputOf(candidates, m)),
    { id: 'job-1', allocations: [gang], edgeConstraints: [] },
    { seed: 1, registry: placementRegistry(offered, null) },
  );
};

describe('measured snapshot: placement on measured figures', () => {
  const siteA = {
    coordinates: new Map([
      [A1, coordinate(A1, A1)],
      [A2, coordinate(A2, A1, { x: 300 })],
      [B, coordinate(B, B, { x: 80_000 })],
    ]),
    links: [
      link(A1, A2, { rttUs: 300, sameSite: true, throughputBps: 9e9 }),
      link(A1, B),
      link(A2, B, { rttUs: 80_200 }),
    ],
  };
  const gang = (over: Partial<GangRequest> = {}) =>
    gangRequest({ gpuCount: 4, maxNodes: 4, maxPricePerGpuHourMinor: 10_000_000, ...over });

  it('a max_rtt 20 ms gang lands in the same-site group, not on the cheaper provider 80 ms away', () => {
    const cheapB = {
      ...candidate(B, 2),
      gpus: candidate(B, 2).gpus.map((g) => ({ ...g, priceFloorMinor: '1000000' })),
    };
    const r = place(
      [candidate(A1, 2), candidate(A2, 2), cheapB],
      siteA,
      gang({ interconnect: { maxRttUs: 20_000, minBandwidthBps: null, sameSite: false } }),
    );
    if (r.code !== 'Success') throw new Error(r.message);
    expect(r.placement.allocations[0]!.nodes.map((n) => n.providerId).sort()).toEqual([A1, A2].sort());
  });

  it('a max_rtt 20 ms gang across measured 80 ms links only is unschedulable, naming the pair and the figure', () => {
    const r = place(
      [candidate(A1, 2), candidate(B, 2)],
      siteA,
      gang({ interconnect: { maxRttUs: 20_000, minBandwidthBps: null, sameSite: false } }),
    );
    if (r.code === 'Success') throw new Error('placed');
    expect(r.reasons[0]!.message).toContain(
      `the nearest measured pair, ${[A1, B].sort().join(' ↔ ')}, has 80 ms RTT`,
    );
  });

  it('a min_bandwidth above every measured cross-site link is unschedulable, naming the measured figure', () => {
    const r = place(
      [candidate(A1, 2), candidate(B, 2)],
      siteA,
      gang({ interconnect: { maxRttUs: null, minBandwidthBps: 5e9, sameSite: false } }),
    );
    if (r.code === 'Success') throw new Error('placed');
    expect(r.reasons[0]!.message).toContain('has 2 Gbit/s');
  });

  it('a new provider nothing has measured is not spanned by a constrained gang, but is by an unconstrained one', () => {
    const fresh = [candidate(C, 2), candidate(edgeId('D'), 2)];
    const constrained = place(
      fresh,
      NO_MEASUREMENTS,
      gang({ interconnect: { maxRttUs: 50_000, minBandwidthBps: null, sameSite: false } }),
    );
    if (constrained.code === 'Success') throw new Error('placed');
    expect(constrained.reasons[0]!.message).toContain('no pair of them is measured yet');
    expect(place(fresh, NO_MEASUREMENTS, gang()).code).toBe('Success');
  });

  it.each([
    {
      name: 'measured fp16 below min_tflops: excluded, the reason naming the measured figure',
      profiles: [
        profile(A1, {
          gpus: [0, 1].map((i) => ({ index: i, uuid: `GPU-${A1.slice(1, 5)}-${i}`, tflops: { fp16: 55 } })),
        }),
      ],
      placed: false,
      reason: { plugin: 'tflops', message: 'GPU has 55 TFLOPS fp16 (measured), below 100' },
    },
    {
      name: 'unmeasured GPU whose reference would pass: waits for its benchmark',
      profiles: [],
      placed: false,
      reason: { plugin: MEASURED_TFLOPS, reason: MeasuredTflopsReason.NotBenchmarked },
    },
    { name: 'measured fp16 above min_tflops: placed', profiles: [profile(A1)], placed: true, reason: null },
  ])('$name', (c) => {
    const r = place(
      [candidate(A1, 2)],
      { profiles: new Map(c.profiles.map((p) => [p.providerId, p])) },
      gang({ gpuCount: 2, minTflops: { fp16: 100 } }),
    );
    expect(r.code === 'Success').toBe(c.placed);
    if (c.reason !== null && r.code !== 'Success') {
      expect(r.reasons).toEqual(expect.arrayContaining([expect.objectContaining(c.reason)]));
    }
  });

  it('mixed_models false keeps a gang on one model, on the measured figures', () => {
    const other = {
      ...candidate(B, 2),
      gpus: candidate(B, 2).gpus.map((g) => ({ ...g, model: 'NVIDIA A100 80GB PCIe' })),
    };
    const r = place(
      [candidate(A1, 2), other],
      { profiles: new Map([[A1, profile(A1)]]) },
      gang({ gpuCount: 4, mixedModels: false }),
    );
    expect(r.code).not.toBe('Success');
    expect(
      place(
        [candidate(A1, 2), other],
        { profiles: new Map([[A1, profile(A1)]]) },
        gang({ gpuCount: 4, mixedModels: true }),
      ).code,
    ).toBe('Success');
  });
});
