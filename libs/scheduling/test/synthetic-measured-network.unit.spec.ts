import { describe, expect, it } from 'vitest';
import {
  createSnapshot,
  gangRequest,
  generateCluster,
  hostLink,
  schedule,
  singleGang,
  verifyPlacement,
  withMeasuredNetwork,
} from '../src';
import { cluster, gpus, host, provider, site } from './fixtures';

const base = generateCluster({ providers: 300, regions: 4, reservedFraction: 0.2 }, 5);

describe('withMeasuredNetwork', () => {
  it('is the same for the same seed and differs for another', () => {
    expect(withMeasuredNetwork(base, {}, 1)).toEqual(withMeasuredNetwork(base, {}, 1));
    expect(withMeasuredNetwork(base, {}, 2).network.hostLinks).not.toEqual(
      withMeasuredNetwork(base, {}, 1).network.hostLinks,
    );
  });

  it('measures every pair inside small sites, peers across, and relays some pairs', () => {
    const m = withMeasuredNetwork(base, { peersPerHost: 6, relayedFraction: 0.5 }, 1);
    const s = createSnapshot(m);
    const inv = s.inventory;
    const measured = new Set(m.network.hostLinks.map((l) => [l.a, l.b].sort().join(' ')));
    for (const site of inv.sites) {
      if (site.hostIndices.length > 32) continue;
      for (const a of site.hostIndices)
        for (const b of site.hostIndices)
          if (a < b) expect(measured.has([inv.hosts[a]!.id, inv.hosts[b]!.id].sort().join(' '))).toBe(true);
    }
    const perHost = new Map<string, number>();
    for (const l of m.network.hostLinks) {
      perHost.set(l.a, (perHost.get(l.a) ?? 0) + 1);
      perHost.set(l.b, (perHost.get(l.b) ?? 0) + 1);
    }
    // Every host probed at least its random half of peers (the nearby half may be itself alone).
    for (const h of inv.hosts) expect(perHost.get(h.id) ?? 0).toBeGreaterThanOrEqual(3);
    const relayed = m.network.hostLinks.filter((l) => l.relayed === true);
    expect(relayed.length).toBeGreaterThan(0);
    for (const l of relayed) expect(l.bandwidthBps).toBeLessThanOrEqual(0.8e9);
    // Direct pairs across sites: RTT within 0.95–1.15 × the sites' true distance, bandwidth under both NICs.
    let across = 0;
    for (const l of m.network.hostLinks) {
      const ha = inv.hosts[inv.hostById.get(l.a)!]!;
      const hb = inv.hosts[inv.hostById.get(l.b)!]!;
      expect(l.bandwidthBps).toBeLessThanOrEqual(Math.min(ha.nicBandwidthBps, hb.nicBandwidthBps));
      if (l.relayed === true || ha.siteIndex === hb.siteIndex) continue;
      across++;
      const ca = inv.sites[ha.siteIndex]!.coordinates!;
      const cb = inv.sites[hb.siteIndex]!.coordinates!;
      const truth = Math.hypot(ca.x - cb.x, ca.y - cb.y) + ca.height + cb.height;
      expect(l.rttUs / truth).toBeGreaterThanOrEqual(0.95);
      expect(l.rttUs / truth).toBeLessThanOrEqual(1.15);
    }
    expect(across).toBeGreaterThan(inv.hosts.length);
  });

  it('gives every host its own fitted coordinate with an error, keeps sites and site links', () => {
    const m = withMeasuredNetwork(base, { coordinateError: 0.2 }, 1);
    const hosts = m.providers.flatMap((p) => p.hosts);
    for (const h of hosts) {
      expect(h.coordinates).not.toBeNull();
      expect(h.coordinatesError).toBeGreaterThan(0);
      expect(h.coordinatesError).toBeLessThanOrEqual(1);
    }
    expect(m.network.sites).toBe(base.network.sites);
    expect(m.network.siteLinks).toBe(base.network.siteLinks);
    expect(m.providers.flatMap((p) => p.hosts.flatMap((h) => h.gpus))).toEqual(
      base.providers.flatMap((p) => p.hosts.flatMap((h) => h.gpus)),
    );
  });

  it('is what placement then sees: measured pairs come from the matrix, constraints hold', () => {
    const m = withMeasuredNetwork(base, {}, 1);
    const s = createSnapshot(m);
    const l = m.network.hostLinks.find((x) => x.relayed === true)!;
    const a = s.inventory.hostById.get(l.a)!;
    const b = s.inventory.hostById.get(l.b)!;
    expect(hostLink(s.inventory, a, b)).toMatchObject({ rttUs: l.rttUs, source: 'host-measured' });
    for (const [i, interconnect] of [
      { minBandwidthBps: null, maxRttUs: 20_000, sameSite: false },
      { minBandwidthBps: 2e9, maxRttUs: null, sameSite: false },
    ].entries()) {
      const request = singleGang('j', gangRequest({ gpuCount: 16, maxNodes: 8, interconnect }));
      const r = schedule(s, request, { seed: i });
      expect(r.code).toBe('Success');
      if (r.code === 'Success') expect(verifyPlacement(s, request, r.placement)).toEqual([]);
    }
  });

  it('rejects a site without coordinates to measure around', () => {
    const input = cluster([provider('p', [host('h', 'a', gpus(1))])], [site('a')]);
    expect(() => withMeasuredNetwork(input, {}, 1)).toThrow('site a has no coordinates');
  });
});
