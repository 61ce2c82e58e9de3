import { describe, expect, it } from 'vitest';
import {
  createSnapshot,
  gangRequest,
  GangAssemblyReason,
  hostLink,
  type LinkInput,
  meetsBounds,
  scheduleGang,
  tflopsFilter,
} from '../src';
import { cluster, ctxOf, firstHost, gpus, host, oneHost, provider, site } from './fixtures';

/** h0, h1 at site a (one LAN); h2, h3 at sites b, c with coordinates 30 ms apart; h4 at site d with none. */
const snapshot = (estimatesMeetBounds: boolean, hostLinks: LinkInput[] = []) =>
  createSnapshot({
    ...cluster(
      [
        provider('p0', [host('h0', 'a', gpus(2))]),
        provider('p1', [host('h1', 'a', gpus(2))]),
        provider('p2', [host('h2', 'b', gpus(2), { coordinates: { x: 0, y: 0, height: 0 } })]),
        provider('p3', [host('h3', 'c', gpus(2), { coordinates: { x: 30_000, y: 0, height: 0 } })]),
        provider('p4', [host('h4', 'd', gpus(2))]),
      ],
      [site('a', { lanRttUs: 300 }), site('b'), site('c'), site('d')],
      { hostLinks, defaultWanRttUs: 10_000 },
    ),
    network: {
      ...cluster([], [site('a')], { hostLinks }).network,
      sites: [site('a', { lanRttUs: 300 }), site('b'), site('c'), site('d')],
      defaultWanRttUs: 10_000,
      estimatesMeetBounds,
    },
  });

const rttOnly: LinkInput = { a: 'h0', b: 'h2', rttUs: 80_000, bandwidthBps: 1e9, bandwidthMeasured: false };

describe('meetsBounds: which figures meet interconnect bounds', () => {
  const at = (s: ReturnType<typeof snapshot>, a: string, b: string) =>
    hostLink(s.inventory, s.inventory.hostById.get(a)!, s.inventory.hostById.get(b)!);
  it.each([
    { name: 'a LAN within the RTT bound', a: 'h0', b: 'h1', rtt: 1_000, bw: null, strict: true, meets: true },
    {
      name: 'a LAN meets a bandwidth bound (one site)',
      a: 'h0',
      b: 'h1',
      rtt: null,
      bw: 1e9,
      strict: true,
      meets: true,
    },
    {
      name: 'coordinates estimate within the RTT bound',
      a: 'h2',
      b: 'h3',
      rtt: 31_000,
      bw: null,
      strict: true,
      meets: true,
    },
    {
      name: 'coordinates never meet a bandwidth bound when strict',
      a: 'h2',
      b: 'h3',
      rtt: null,
      bw: 1e9,
      strict: true,
      meets: false,
    },
    {
      name: 'the default WAN RTT meets no RTT bound when strict',
      a: 'h2',
      b: 'h4',
      rtt: 50_000,
      bw: null,
      strict: true,
      meets: false,
    },
    {
      name: 'the default WAN RTT counts when estimates do',
      a: 'h2',
      b: 'h4',
      rtt: 50_000,
      bw: null,
      strict: false,
      meets: true,
    },
    {
      name: 'an RTT-only measurement meets no bandwidth bound when strict',
      a: 'h0',
      b: 'h2',
      rtt: null,
      bw: 1e8,
      strict: true,
      meets: false,
      links: [rttOnly],
    },
    {
      name: 'an RTT-only measurement meets an RTT bound',
      a: 'h0',
      b: 'h2',
      rtt: 90_000,
      bw: null,
      strict: true,
      meets: true,
      links: [rttOnly],
    },
    {
      name: 'a measured RTT above the bound',
      a: 'h0',
      b: 'h2',
      rtt: 20_000,
      bw: null,
      strict: true,
      meets: false,
      links: [rttOnly],
    },
  ])('$name', (c) => {
    const s = snapshot(!c.strict, c.links ?? []);
    expect(meetsBounds(s.inventory, at(s, c.a, c.b), c.bw, c.rtt)).toBe(c.meets);
  });
});

describe('interconnect reasons name the measured pair that stood in the way', () => {
  const gang = (maxRttUs: number | null, minBandwidthBps: number | null = null) =>
    gangRequest({
      gpuCount: 4,
      maxNodes: 2,
      interconnect: { maxRttUs, minBandwidthBps, sameSite: false },
    });

  it('a 20 ms gang fits on the LAN pair and never spans the measured 80 ms link', () => {
    const s = snapshot(false, [{ a: 'h0', b: 'h2', rttUs: 80_000, bandwidthBps: 1e9 }]);
    const r = scheduleGang(s, 'j', gang(20_000), { seed: 1 });
    if (r.code !== 'Success') throw new Error(r.message);
    expect(r.placement.allocations[0]!.nodes.map((n) => n.hostId).sort()).toEqual(['h0', 'h1']);
  });

  it('names the measured pair and its RTT when no set of nodes is close enough', () => {
    const links: LinkInput[] = [
      { a: 'h2', b: 'h3', rttUs: 80_000, bandwidthBps: 1e9 },
      { a: 'h2', b: 'h4', rttUs: 150_000, bandwidthBps: 1e9 },
    ];
    const s = createSnapshot({
      ...cluster(
        [
          provider('p2', [host('h2', 'b', gpus(2))]),
          provider('p3', [host('h3', 'c', gpus(2))]),
          provider('p4', [host('h4', 'd', gpus(2))]),
        ],
        [site('b'), site('c'), site('d')],
        { hostLinks: links },
      ),
      network: {
        ...cluster([], [site('b'), site('c'), site('d')], { hostLinks: links }).network,
        estimatesMeetBounds: false,
      },
    });
    const r = scheduleGang(s, 'j', gang(20_000), { seed: 1 });
    if (r.code === 'Success') throw new Error('placed');
    expect(r.reasons[0]).toMatchObject({ reason: GangAssemblyReason.InterconnectUnsatisfied });
    expect(r.reasons[0]!.message).toContain('the nearest measured pair, h2 ↔ h3, has 80 ms RTT');
  });

  it('says that nothing is measured when only estimates would have met the bound', () => {
    const s = createSnapshot({
      ...cluster(
        [provider('p2', [host('h2', 'b', gpus(2))]), provider('p4', [host('h4', 'd', gpus(2))])],
        [site('b'), site('d')],
      ),
      network: {
        ...cluster([], [site('b'), site('d')], { defaultWanRttUs: 10_000 }).network,
        estimatesMeetBounds: false,
      },
    });
    const r = scheduleGang(s, 'j', gang(50_000), { seed: 1 });
    if (r.code === 'Success') throw new Error('placed');
    expect(r.reasons[0]!.message).toContain('no pair of them is measured yet');
    // The same snapshot with estimates counting places the gang on the default WAN RTT.
    const lenient = createSnapshot({
      ...cluster(
        [provider('p2', [host('h2', 'b', gpus(2))]), provider('p4', [host('h4', 'd', gpus(2))])],
        [site('b'), site('d')],
        { defaultWanRttUs: 10_000 },
      ),
    });
    expect(scheduleGang(lenient, 'j', gang(50_000), { seed: 1 }).code).toBe('Success');
  });

  it('names the measured bandwidth under a bandwidth bound', () => {
    const s = snapshot(false, [{ a: 'h0', b: 'h2', rttUs: 80_000, bandwidthBps: 1e9 }]);
    const r = scheduleGang(
      s,
      'j',
      gangRequest({
        gpuCount: 6,
        maxNodes: 3,
        interconnect: { maxRttUs: null, minBandwidthBps: 2e9, sameSite: false },
      }),
      { seed: 1 },
    );
    if (r.code === 'Success') throw new Error('placed');
    expect(r.reasons[0]!.message).toContain('the nearest measured pair, h0 ↔ h2, has 1 Gbit/s');
  });
});

describe('tflops reasons name the GPU’s own figure', () => {
  it.each([
    {
      name: 'measured below the minimum',
      over: { tflops: { fp16: 55.5 }, tflopsMeasured: true },
      says: 'GPU has 55.5 TFLOPS fp16 (measured), below 100',
    },
    {
      name: 'declared below the minimum',
      over: { tflops: { fp16: 80 }, tflopsMeasured: false },
      says: 'GPU has 80 TFLOPS fp16 (declared), below 100',
    },
    {
      name: 'no figure for the precision',
      over: { tflops: {}, tflopsMeasured: true },
      says: 'GPU has no fp16 figure, below 100',
    },
  ])('$name', (c) => {
    const s = oneHost(gpus(1, 'A100-80G', c.over));
    const { gpu, host: h, provider: p } = { ...firstHost(s), gpu: firstHost(s).gpus[0]! };
    const st = tflopsFilter.gpuFilter!(ctxOf(s, { minTflops: { fp16: 100 } }))!(gpu, h, p);
    expect(st.message).toBe(c.says);
  });
});

describe('a gang spans sites whose hosts are measured close, whatever the sites’ estimate', () => {
  /** Four hosts, each its own site (no site links or coordinates: the default WAN RTT, 30 ms). */
  const hosts = ['h0', 'h1', 'h2', 'h3'];
  const everyPair = (rttUs: number): LinkInput[] =>
    hosts.flatMap((a, i) => hosts.slice(i + 1).map((b) => ({ a, b, rttUs, bandwidthBps: 5e9 })));
  const ownSites = (hostLinks: LinkInput[]) =>
    createSnapshot({
      ...cluster(
        hosts.map((h, i) => provider(`p${i}`, [host(h, `s${i}`, gpus(2))])),
        hosts.map((_, i) => site(`s${i}`)),
      ),
      network: {
        ...cluster(
          [],
          hosts.map((_, i) => site(`s${i}`)),
          { hostLinks, defaultWanRttUs: 30_000 },
        ).network,
        estimatesMeetBounds: false,
      },
    });
  const eight = gangRequest({
    gpuCount: 8,
    maxNodes: 4,
    gpusPerNode: { min: 2, max: 32 },
    interconnect: { maxRttUs: 20_000, minBandwidthBps: 1e9, sameSite: false },
  });

  it.each([
    { name: 'every pair measured at 8 ms: placed on all four', links: everyPair(8_000), placed: true },
    { name: 'every pair measured at 300 µs: placed on all four', links: everyPair(300), placed: true },
    { name: 'every pair measured at 45 ms: waits', links: everyPair(45_000), placed: false },
    {
      name: 'one pair measured at 45 ms, the rest at 8 ms: no set of four',
      links: [
        ...everyPair(8_000).filter((l) => !(l.a === 'h0' && l.b === 'h3')),
        { a: 'h0', b: 'h3', rttUs: 45_000, bandwidthBps: 5e9 },
      ],
      placed: false,
    },
  ])('$name', ({ links, placed }) => {
    const r = scheduleGang(ownSites(links), 'j', eight, { seed: 1 });
    if (!placed) {
      expect(r.code).not.toBe('Success');
      return;
    }
    if (r.code !== 'Success') throw new Error(r.message);
    expect(r.placement.allocations[0]!.nodes.map((n) => [n.hostId, n.gpuUuids.length]).sort()).toEqual(
      hosts.map((h) => [h, 2]),
    );
  });
});
