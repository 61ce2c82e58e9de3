import { describe, expect, it } from 'vitest';
import {
  applyPlacement,
  type ClusterSnapshot,
  type ClusterSnapshotInput,
  createPrng,
  createSnapshot,
  freeGpuCount,
  gangRequest,
  generateCluster,
  hostLink,
  InvalidSnapshotError,
  type LinkInput,
  type LinkUpdate,
  schedule,
  singleGang,
  withMeasuredLinks,
  withMeasuredNetwork,
} from '../src';
import { maxCrossSiteBandwidthBps } from '../src/domain/snapshot/network';
import { cluster, gpus, host, provider, site } from './fixtures';

const input = withMeasuredNetwork(
  generateCluster({ providers: 120, regions: 3, reservedFraction: 0.2 }, 9),
  { peersPerHost: 6 },
  9,
);

/** New measurements: re-measured pairs (half of them) and pairs never measured before. */
const updates = (s: ClusterSnapshot, count: number, seed: number): LinkInput[] => {
  const rnd = createPrng(seed);
  const hosts = s.inventory.hosts;
  return Array.from({ length: count }, (_, i) => {
    const old = input.network.hostLinks[Math.floor(rnd() * input.network.hostLinks.length)]!;
    const [a, b] =
      i % 2 === 0
        ? [old.a, old.b]
        : [hosts[Math.floor(rnd() * hosts.length)]!.id, hosts[Math.floor(rnd() * hosts.length)]!.id];
    return { a, b, bandwidthBps: (0.1 + rnd() * 20) * 1e9, rttUs: rnd() * 90_000, relayed: rnd() < 0.2 };
  }).filter((l) => l.a !== l.b);
};

const rebuilt = (links: readonly LinkInput[], siteLinks: readonly LinkInput[] = []): ClusterSnapshot =>
  createSnapshot({
    ...input,
    network: {
      ...input.network,
      hostLinks: [...input.network.hostLinks, ...links],
      siteLinks: [...input.network.siteLinks, ...siteLinks],
    },
  } satisfies ClusterSnapshotInput);

const requests = [
  gangRequest({ name: 'any', gpuCount: 16, maxNodes: 4 }),
  gangRequest({
    name: 'rtt',
    gpuCount: 12,
    maxNodes: 6,
    interconnect: { minBandwidthBps: null, maxRttUs: 20_000, sameSite: false },
  }),
  gangRequest({
    name: 'bw',
    gpuCount: 8,
    maxNodes: 8,
    interconnect: { minBandwidthBps: 2e9, maxRttUs: null, sameSite: false },
  }),
];

describe('withMeasuredLinks', () => {
  it('gives what a rebuild with the links appended gives: links, and placements', () => {
    const s0 = createSnapshot(input);
    // One measurement at a time, past the point where the recent pairs are folded into the base.
    const links = updates(s0, 300, 1);
    const siteLinks: LinkInput[] = [
      { a: input.network.sites[0]!.id, b: input.network.sites[1]!.id, bandwidthBps: 3e9, rttUs: 4_000 },
    ];
    let s = withMeasuredLinks(s0, { siteLinks });
    for (const l of links) s = withMeasuredLinks(s, { hostLinks: [l] });
    const r = rebuilt(links, siteLinks);
    expect(new Map(s.inventory.hostLinks)).toEqual(r.inventory.hostLinks);
    expect(s.inventory.hostLinks.size).toBe(r.inventory.hostLinks.size);
    expect(new Map(s.inventory.siteLinks)).toEqual(r.inventory.siteLinks);
    const n = s.inventory.hosts.length;
    for (let a = 0; a < n; a++)
      for (let b = a + 1; b < n; b++)
        expect(hostLink(s.inventory, a, b)).toEqual(hostLink(r.inventory, a, b));
    for (const [i, g] of requests.entries()) {
      for (const seed of [i, 100 + i]) {
        const request = singleGang(`j${seed}`, g);
        expect(schedule(s, request, { seed })).toEqual(schedule(r, request, { seed }));
      }
    }
  });

  it('changes placements the way the new figures say', () => {
    const s0 = createSnapshot(
      cluster(
        [
          provider('p0', [host('h0', 'a', gpus(4))]),
          provider('p1', [host('h1', 'b', gpus(4))]),
          provider('p2', [host('h2', 'c', gpus(4))]),
        ],
        [site('a'), site('b'), site('c')],
        { defaultWanBandwidthBps: 1e9 },
      ),
    );
    const request = singleGang(
      'j',
      gangRequest({
        gpuCount: 8,
        maxNodes: 2,
        interconnect: { minBandwidthBps: 5e9, maxRttUs: null, sameSite: false },
      }),
    );
    expect(schedule(s0, request, { seed: 1 }).code).not.toBe('Success');
    const s1 = withMeasuredLinks(s0, { hostLinks: [{ a: 'h1', b: 'h2', bandwidthBps: 10e9, rttUs: 9_000 }] });
    const r = schedule(s1, request, { seed: 1 });
    expect(r.code).toBe('Success');
    if (r.code === 'Success')
      expect(r.placement.allocations[0]!.nodes.map((x) => x.hostId).sort()).toEqual(['h1', 'h2']);
  });

  it('keeps reservations made since, and leaves the snapshot it came from alone', () => {
    const s0 = createSnapshot(input);
    const r = schedule(s0, singleGang('held', requests[0]!), { seed: 3 });
    expect(r.code).toBe('Success');
    if (r.code !== 'Success') return;
    const s1 = applyPlacement(s0, r.placement);
    const before = new Map(s1.inventory.hostLinks);
    const [l] = updates(s1, 1, 4);
    const s2 = withMeasuredLinks(s1, { hostLinks: [l!] });
    expect(s2.freeMask).toEqual(s1.freeMask);
    expect(s2.owners).toEqual(s1.owners);
    expect(new Map(s1.inventory.hostLinks)).toEqual(before);
    expect(withMeasuredLinks(s1, {})).toBe(s1);
  });

  it('keeps memoized filter results and drops what depends on links', () => {
    const s0 = createSnapshot(input);
    schedule(s0, singleGang('j', requests[1]!), { seed: 1 });
    // More GPUs than are free: the framework then asks whether an empty cluster could hold them.
    const tooMany = gangRequest({ gpuCount: freeGpuCount(s0) + 1, maxNodes: s0.inventory.hosts.length });
    expect(schedule(s0, singleGang('k', tooMany), { seed: 1 }).code).not.toBe('Success');
    const keys0 = [...s0.inventory.memo.keys()];
    const kept = keys0.filter((k) => k.startsWith('eligibility:'));
    expect(kept.length).toBeGreaterThan(0);
    const dependent = keys0.filter(
      (k) => !/^(eligibility:|speeds:|order:|prices$|max-cross-site-bandwidth$)/.test(k),
    );
    expect(dependent.length).toBeGreaterThan(0);
    const s1 = withMeasuredLinks(s0, { hostLinks: updates(s0, 1, 2) });
    const keys = [...s1.inventory.memo.keys()];
    expect(keys).toEqual(expect.arrayContaining(kept));
    for (const k of dependent) expect(keys).not.toContain(k);
    for (const k of kept) expect(s1.inventory.memo.get(k)).toBe(s0.inventory.memo.get(k));
  });

  describe('carries the widest cross-site link over where that is exact', () => {
    const s0 = createSnapshot(input);
    const inv = s0.inventory;
    const widest = maxCrossSiteBandwidthBps(inv);
    const crossSite = (l: LinkInput) =>
      inv.hosts[inv.hostById.get(l.a)!]!.siteIndex !== inv.hosts[inv.hostById.get(l.b)!]!.siteIndex;
    const holder = input.network.siteLinks.find((l) => l.bandwidthBps === widest)!;
    const other = input.network.hostLinks.find((l) => crossSite(l) && l.bandwidthBps < widest)!;
    const inside = input.network.hostLinks.find((l) => !crossSite(l))!;
    it.each<[string, LinkUpdate, boolean]>([
      ['a new widest host link', { hostLinks: [{ ...other, bandwidthBps: widest * 2 }] }, true],
      [
        'a narrower link lowered further',
        { hostLinks: [{ ...other, bandwidthBps: other.bandwidthBps / 2 }] },
        true,
      ],
      ['a link inside a site', { hostLinks: [{ ...inside, bandwidthBps: widest * 4 }] }, true],
      ['the widest site link lowered', { siteLinks: [{ ...holder, bandwidthBps: 1e6 }] }, false],
    ])('%s', (_name, update, carried) => {
      expect(holder).toBeDefined();
      const s1 = withMeasuredLinks(s0, update);
      expect(s1.inventory.memo.has('max-cross-site-bandwidth')).toBe(carried);
      expect(maxCrossSiteBandwidthBps(s1.inventory)).toBe(
        maxCrossSiteBandwidthBps(rebuilt(update.hostLinks ?? [], update.siteLinks ?? []).inventory),
      );
    });
  });

  it.each<[string, LinkInput, string]>([
    ['an unknown host', { a: 'p0-h0', b: 'nope', bandwidthBps: 1e9, rttUs: 1 }, 'names an unknown host'],
    ['a zero bandwidth', { a: 'p0-h0', b: 'p1-h0', bandwidthBps: 0, rttUs: 1 }, 'bandwidthBps must be'],
    ['a negative RTT', { a: 'p0-h0', b: 'p1-h0', bandwidthBps: 1e9, rttUs: -1 }, 'rttUs must be'],
    ['a NaN RTT', { a: 'p0-h0', b: 'p1-h0', bandwidthBps: 1e9, rttUs: NaN }, 'rttUs must be'],
  ])('rejects a link with %s, as createSnapshot does', (_name, link, message) => {
    const s0 = createSnapshot(input);
    expect(() => withMeasuredLinks(s0, { hostLinks: [link] })).toThrow(InvalidSnapshotError);
    expect(() => withMeasuredLinks(s0, { hostLinks: [link] })).toThrow(message);
    expect(() => rebuilt([link])).toThrow(message);
  });

  it('rejects a site link to an unknown site', () => {
    const s0 = createSnapshot(input);
    expect(() =>
      withMeasuredLinks(s0, { siteLinks: [{ a: 'x', b: 'y', bandwidthBps: 1e9, rttUs: 1 }] }),
    ).toThrow('site link x–y names an unknown site');
  });
});
