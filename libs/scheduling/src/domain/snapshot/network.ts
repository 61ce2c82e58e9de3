import type { NetworkCoordinate } from '../model/snapshot-input';
import { hostPairKey, type Inventory, type MeasuredLink, memoized, sitePairKey } from './cluster-snapshot';

/** Where a link figure came from, best first. */
export type LinkSource = 'host-measured' | 'site-lan' | 'site-measured' | 'coordinates' | 'default';

export interface Link extends MeasuredLink {
  readonly source: LinkSource;
}

const distance = (a: NetworkCoordinate, b: NetworkCoordinate): number =>
  Math.hypot(a.x - b.x, a.y - b.y) + a.height + b.height;

/**
 * The network between two different hosts, as the scheduler believes it: a measurement of that
 * host pair; else the site's LAN when both are at one site; else a measurement between their sites;
 * else an estimate (RTT from network coordinates or the default WAN RTT, the default WAN bandwidth).
 * Bandwidth is capped by both hosts' NICs.
 */
export const hostLink = (inv: Inventory, a: number, b: number): Link => {
  const ha = inv.hosts[a]!;
  const hb = inv.hosts[b]!;
  const nic = Math.min(ha.nicBandwidthBps, hb.nicBandwidthBps);
  const measured = inv.hostLinks.size === 0 ? undefined : inv.hostLinks.get(hostPairKey(inv, a, b));
  if (measured !== undefined) {
    return {
      bandwidthBps: Math.min(measured.bandwidthBps, nic),
      rttUs: measured.rttUs,
      bandwidthMeasured: measured.bandwidthMeasured,
      source: 'host-measured',
    };
  }
  if (ha.siteIndex === hb.siteIndex) {
    const site = inv.sites[ha.siteIndex]!;
    return {
      bandwidthBps: Math.min(site.lanBandwidthBps, nic),
      rttUs: site.lanRttUs,
      bandwidthMeasured: true,
      source: 'site-lan',
    };
  }
  const siteMeasured =
    inv.siteLinks.size === 0 ? undefined : inv.siteLinks.get(sitePairKey(inv, ha.siteIndex, hb.siteIndex));
  if (siteMeasured !== undefined) {
    return {
      bandwidthBps: Math.min(siteMeasured.bandwidthBps, nic),
      rttUs: siteMeasured.rttUs,
      bandwidthMeasured: siteMeasured.bandwidthMeasured,
      source: 'site-measured',
    };
  }
  const bandwidthBps = Math.min(inv.defaultWanBandwidthBps, nic);
  if (ha.coordinates !== null && hb.coordinates !== null) {
    return {
      bandwidthBps,
      rttUs: distance(ha.coordinates, hb.coordinates),
      bandwidthMeasured: false,
      source: 'coordinates',
    };
  }
  return { bandwidthBps, rttUs: inv.defaultWanRttUs, bandwidthMeasured: false, source: 'default' };
};

/**
 * Whether a link meets interconnect bounds (null: none). Where the snapshot says estimates do not
 * count (`estimatesMeetBounds` false), the default WAN RTT meets no RTT bound and an estimated
 * bandwidth no bandwidth bound: such a pair waits for a measurement.
 */
export const meetsBounds = (
  inv: Inventory,
  l: Link,
  minBandwidthBps: number | null,
  maxRttUs: number | null,
): boolean =>
  (maxRttUs === null || (l.rttUs <= maxRttUs && (inv.estimatesMeetBounds || l.source !== 'default'))) &&
  (minBandwidthBps === null ||
    (l.bandwidthBps >= minBandwidthBps && (inv.estimatesMeetBounds || l.bandwidthMeasured)));

/**
 * The network between two different sites as a pair of hosts there without measurements or
 * coordinates of their own would see it, before NIC caps: measured, else estimated.
 */
export const siteLink = (inv: Inventory, a: number, b: number): Link => {
  const m = inv.siteLinks.size === 0 ? undefined : inv.siteLinks.get(sitePairKey(inv, a, b));
  if (m !== undefined) return { ...m, source: 'site-measured' };
  const ca = inv.sites[a]!.coordinates;
  const cb = inv.sites[b]!.coordinates;
  const bandwidthBps = inv.defaultWanBandwidthBps;
  if (ca !== null && cb !== null) {
    return { bandwidthBps, rttUs: distance(ca, cb), bandwidthMeasured: false, source: 'coordinates' };
  }
  return { bandwidthBps, rttUs: inv.defaultWanRttUs, bandwidthMeasured: false, source: 'default' };
};

/** Estimated RTT between two sites (the LAN's inside one site), µs. */
export const siteRttUs = (inv: Inventory, a: number, b: number): number =>
  a === b ? inv.sites[a]!.lanRttUs : siteLink(inv, a, b).rttUs;

const CROSS_SITE_HOST_RTT = 'cross-site-host-rtt';

/** Per pair of different sites (`sitePairKey`): the lowest RTT measured between a host of each. */
const crossSiteHostRttUs = (inv: Inventory): ReadonlyMap<number, number> =>
  memoized(inv, CROSS_SITE_HOST_RTT, () => {
    const lowest = new Map<number, number>();
    const n = inv.hosts.length;
    for (const [key, l] of inv.hostLinks) {
      const sa = inv.hosts[Math.floor(key / n)]!.siteIndex;
      const sb = inv.hosts[key % n]!.siteIndex;
      if (sa === sb) continue;
      const pair = sitePairKey(inv, sa, sb);
      const seen = lowest.get(pair);
      if (seen === undefined || l.rttUs < seen) lowest.set(pair, l.rttUs);
    }
    return lowest;
  });

/**
 * The lowest RTT two hosts at sites `a` and `b` may have, µs: the sites' estimate, or a measured
 * host pair's when lower. The cross-site search picks and prunes sites by it: by the estimate
 * alone (the default WAN RTT, with no site links or site coordinates), hosts that are each their own
 * site and measured close together would never be joined under a `max_rtt` below that default.
 */
export const siteRttLowerUs = (inv: Inventory, a: number, b: number): number => {
  const estimate = siteRttUs(inv, a, b);
  if (a === b || inv.hostLinks.size === 0) return estimate;
  const measured = crossSiteHostRttUs(inv).get(sitePairKey(inv, a, b));
  return measured === undefined ? estimate : Math.min(estimate, measured);
};

const MAX_CROSS_SITE = 'max-cross-site-bandwidth';

/** The most bandwidth any pair of hosts at different sites can have (bounds the wide-area ring), bits/s. */
export const maxCrossSiteBandwidthBps = (inv: Inventory): number =>
  memoized(inv, MAX_CROSS_SITE, () => {
    let max = inv.defaultWanBandwidthBps;
    for (const l of inv.siteLinks.values()) max = Math.max(max, l.bandwidthBps);
    const n = inv.hosts.length;
    for (const [key, l] of inv.hostLinks) {
      const a = Math.floor(key / n);
      const b = key % n;
      if (inv.hosts[a]!.siteIndex !== inv.hosts[b]!.siteIndex) max = Math.max(max, l.bandwidthBps);
    }
    return max;
  });

/**
 * `maxCrossSiteBandwidthBps` after new measurements, from the value memoized before them, without
 * a scan of every link — or undefined (computed again on use) when `prev` has none or an update
 * lowered a link that may have held the maximum.
 */
export const maxCrossSiteAfter = (
  prev: Inventory,
  hostUpdates: ReadonlyMap<number, MeasuredLink>,
  siteUpdates: ReadonlyMap<number, MeasuredLink>,
): number | undefined => {
  let max = prev.memo.get(MAX_CROSS_SITE) as number | undefined;
  if (max === undefined) return undefined;
  const n = prev.hosts.length;
  const apply = (old: MeasuredLink | undefined, next: MeasuredLink): boolean => {
    if (old !== undefined && old.bandwidthBps >= max! && next.bandwidthBps < old.bandwidthBps) return false;
    max = Math.max(max!, next.bandwidthBps);
    return true;
  };
  for (const [key, l] of siteUpdates) if (!apply(prev.siteLinks.get(key), l)) return undefined;
  for (const [key, l] of hostUpdates) {
    const crossSite = prev.hosts[Math.floor(key / n)]!.siteIndex !== prev.hosts[key % n]!.siteIndex;
    if (crossSite && !apply(prev.hostLinks.get(key), l)) return undefined;
  }
  return max;
};

/** Where `withMeasuredLinks` keeps the value `maxCrossSiteAfter` carried over. */
export const carryMaxCrossSite = (memo: Map<string, unknown>, value: number): void => {
  memo.set(MAX_CROSS_SITE, value);
};
