import { describe, expect, it } from 'vitest';
import {
  applyPlacement,
  createSnapshot,
  freeGpuCount,
  gpuOwner,
  hostLink,
  InvalidSnapshotError,
  isPlacementConflict,
  type Placement,
  PlacementConflictError,
  releasePlacement,
} from '../src';
import { cluster, gpu, gpus, host, provider, site } from './fixtures';

const input = () =>
  cluster(
    [
      provider('p0', [host('h0', 'a', gpus(4)), host('h1', 'a', gpus(2, 'A100-80G', { reservedBy: 'old' }))]),
      provider('p1', [host('h2', 'b', gpus(8), { nicBandwidthBps: 25e9 })]),
      provider('p2', [host('h3', 'c', gpus(1), { coordinates: { x: 0, y: 0, height: 500 } })]),
    ],
    [
      site('a', { lanBandwidthBps: 200e9, lanRttUs: 30, coordinates: { x: 0, y: 0, height: 100 } }),
      site('b', { coordinates: { x: 30_000, y: 40_000, height: 100 } }),
      site('c', { coordinates: { x: 3_000, y: 4_000, height: 0 } }),
    ],
    {
      siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 40e9, rttUs: 20_000 }],
      hostLinks: [{ a: 'h0', b: 'h3', bandwidthBps: 1e9, rttUs: 7 }],
    },
  );

const placementOf = (
  id: string,
  s: ReturnType<typeof createSnapshot>,
  hostId: string,
  n: number,
): Placement => {
  const h = s.inventory.hosts[s.inventory.hostById.get(hostId)!]!;
  const uuids = s.inventory.gpus.slice(h.gpuStart, h.gpuStart + n).map((g) => g.uuid);
  return {
    id,
    allocations: [
      {
        name: 'main',
        gpuCount: n,
        nodes: [{ providerId: 'x', hostId, siteId: 'x', gpuUuids: uuids, ranks: n }],
        prediction: {
          stepUs: 0,
          computeUs: 0,
          commUs: 0,
          intraHostUs: 0,
          intraSiteUs: 0,
          interSiteUs: 0,
          slowestTflops: 0,
        },
        pricePerHourMinor: 0,
        sites: 1,
        minPairBandwidthBps: null,
        maxPairRttUs: null,
      },
    ],
  };
};

describe('createSnapshot', () => {
  it('compiles providers → hosts → GPUs, free and reserved', () => {
    const s = createSnapshot(input());
    expect(s.inventory.gpus).toHaveLength(15);
    expect(s.inventory.hosts.map((h) => h.id)).toEqual(['h0', 'h1', 'h2', 'h3']);
    expect(freeGpuCount(s)).toBe(13);
    expect(gpuOwner(s, s.inventory.gpus[4]!.uuid)).toBe('old');
    expect(gpuOwner(s, 'nope')).toBeUndefined();
  });

  it.each([
    [
      'a duplicate GPU',
      () =>
        cluster(
          [provider('p', [host('h', 'a', [gpu('T4', { uuid: 'x' }), gpu('T4', { uuid: 'x' })])])],
          [site('a')],
        ),
    ],
    [
      'a duplicate host',
      () => cluster([provider('p', [host('h', 'a', gpus(1)), host('h', 'a', gpus(1))])], [site('a')]),
    ],
    ['an unknown site', () => cluster([provider('p', [host('h', 'z', gpus(1))])], [site('a')])],
    ['33 GPUs on a host', () => cluster([provider('p', [host('h', 'a', gpus(33))])], [site('a')])],
    [
      'a link to an unknown host',
      () =>
        cluster([provider('p', [host('h', 'a', gpus(1))])], [site('a')], {
          hostLinks: [{ a: 'h', b: 'q', bandwidthBps: 1, rttUs: 1 }],
        }),
    ],
    [
      'a zero NIC',
      () => cluster([provider('p', [host('h', 'a', gpus(1), { nicBandwidthBps: 0 })])], [site('a')]),
    ],
  ])('rejects %s', (_name, make) => {
    expect(() => createSnapshot(make())).toThrow(InvalidSnapshotError);
  });
});

describe('applyPlacement / releasePlacement', () => {
  it('reserves without touching the input, and shares untouched hosts', () => {
    const s0 = createSnapshot(input());
    const p = placementOf('job-1', s0, 'h0', 3);
    const s1 = applyPlacement(s0, p);
    expect(freeGpuCount(s0)).toBe(13);
    expect(freeGpuCount(s1)).toBe(10);
    expect(s1.version).toBe(1);
    expect(s1.inventory).toBe(s0.inventory);
    expect(s1.owners[2]).toBe(s0.owners[2]);
    expect(gpuOwner(s1, p.allocations[0]!.nodes[0]!.gpuUuids[0]!)).toBe('job-1');
  });

  it('applying the same placement twice equals applying it once', () => {
    const s0 = createSnapshot(input());
    const p = placementOf('job-1', s0, 'h0', 2);
    const once = applyPlacement(s0, p);
    const twice = applyPlacement(once, p);
    expect([...twice.freeMask]).toEqual([...once.freeMask]);
  });

  it('refuses a GPU held by another placement (no double booking)', () => {
    const s0 = createSnapshot(input());
    const s1 = applyPlacement(s0, placementOf('job-1', s0, 'h0', 2));
    const clash = () => applyPlacement(s1, placementOf('job-2', s0, 'h0', 1));
    expect(clash).toThrow(PlacementConflictError);
    try {
      clash();
    } catch (e) {
      expect(isPlacementConflict(e) && e.heldBy).toBe('job-1');
    }
    expect(() => applyPlacement(s0, placementOf('job-3', s0, 'h1', 1))).toThrow(/held by old/);
  });

  it('release is idempotent and frees only its own GPUs', () => {
    const s0 = createSnapshot(input());
    const p = placementOf('job-1', s0, 'h0', 4);
    const s1 = applyPlacement(s0, p);
    const r1 = releasePlacement(s1, p);
    expect(freeGpuCount(r1)).toBe(13);
    expect(releasePlacement(r1, p)).toBe(r1);
    expect(freeGpuCount(releasePlacement(s1, 'job-1'))).toBe(13);
    expect(freeGpuCount(releasePlacement(s1, 'other'))).toBe(9);
    expect(gpuOwner(releasePlacement(s1, 'old'), s0.inventory.gpus[4]!.uuid)).toBeNull();
  });
});

describe('hostLink', () => {
  const s = createSnapshot(input());
  const h = (id: string) => s.inventory.hostById.get(id)!;
  it.each([
    [
      'a measured host pair wins',
      'h0',
      'h3',
      { bandwidthBps: 1e9, rttUs: 7, bandwidthMeasured: true, source: 'host-measured' },
    ],
    [
      'same site: the LAN, capped by NICs',
      'h0',
      'h1',
      { bandwidthBps: 100e9, rttUs: 30, bandwidthMeasured: true, source: 'site-lan' },
    ],
    [
      'measured site pair, capped by the slower NIC',
      'h0',
      'h2',
      { bandwidthBps: 25e9, rttUs: 20_000, bandwidthMeasured: true, source: 'site-measured' },
    ],
    [
      'host coordinates: distance plus heights',
      'h2',
      'h3',
      { bandwidthBps: 10e9, rttUs: 50_000 + 100 + 500, bandwidthMeasured: false, source: 'coordinates' },
    ],
  ])('%s', (_name, a, b, expected) => {
    const l = hostLink(s.inventory, h(a), h(b));
    expect({ ...l, rttUs: Math.round(l.rttUs) }).toEqual(expected);
    expect(hostLink(s.inventory, h(b), h(a)).rttUs).toBeCloseTo(l.rttUs);
  });
});
