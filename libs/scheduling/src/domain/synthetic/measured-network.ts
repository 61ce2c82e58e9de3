import type {
  ClusterSnapshotInput,
  HostInput,
  LinkInput,
  NetworkCoordinate,
  SiteInput,
} from '../model/snapshot-input';
import { createPrng } from '../random/prng';

/**
 * What benchmarking would have measured on a synthetic cluster after a number of probe cycles, for
 * tests and benchmarks of placement on a measured network. Same (input, spec, seed) → same output.
 */
export interface MeasuredNetworkSpec {
  /**
   * Peers each host has a measured link with besides its own site's hosts: half picked among hosts
   * nearby (the same coordinate cell, as suspected-LAN and nearest-peer probing favour), half
   * anywhere (the probe sampler's random peers). Default 8.
   */
  readonly peersPerHost?: number;
  /** Sites up to this many hosts have every pair inside measured; larger ones `peersPerHost` per host. Default 32. */
  readonly fullSiteHosts?: number;
  /** Share of single-host sites (home rigs) behind NAT: their cross-site pairs go through a relay. Default 0.2. */
  readonly relayedFraction?: number;
  /** Relative error of the hosts' fitted coordinates (Vivaldi's local error, 0 … 1). Default 0.15. */
  readonly coordinateError?: number;
  /** When the measurements are said to have been taken (ISO 8601); spread over the hour before. Default 2026-12-01T12:00:00Z. */
  readonly measuredAt?: string;
}

/** Width of the coordinate cells that count as "nearby", µs (a metro region in `generateCluster`). */
const CELL_US = 5_000;
/** What a relay adds to a relayed pair's RTT: two extra hops through a relay near one end, µs. */
const RELAY_EXTRA_RTT_US = 6_000;

/**
 * A copy of `input` whose network is what the measurements say, the way the scheduler's projection
 * would carry them: every host gets its own fitted coordinate (its site's, the truth here, plus an
 * error), measured host links (inside sites: the LAN; across: RTT near the coordinates' distance,
 * bandwidth below both NICs and the path), relayed pairs with the relay's RTT and throughput, and
 * the input's sites (same-site groups) and site links kept. Every site must have coordinates (as
 * `generateCluster`'s do): they are the ground truth the measurements are drawn around.
 */
export const withMeasuredNetwork = (
  input: ClusterSnapshotInput,
  spec: MeasuredNetworkSpec,
  seed: number,
): ClusterSnapshotInput => {
  const rnd = createPrng(seed);
  const peers = spec.peersPerHost ?? 8;
  const fullSite = spec.fullSiteHosts ?? 32;
  const relayedShare = spec.relayedFraction ?? 0.2;
  const error = spec.coordinateError ?? 0.15;
  const at = Date.parse(spec.measuredAt ?? '2026-12-01T12:00:00Z');
  if (!Number.isFinite(at)) throw new Error(`measuredAt ${spec.measuredAt} is not an ISO 8601 time`);

  const siteById = new Map<string, SiteInput>(input.network.sites.map((s) => [s.id, s]));
  const hosts: { readonly h: HostInput; readonly site: SiteInput; readonly truth: NetworkCoordinate }[] = [];
  for (const p of input.providers) {
    for (const h of p.hosts) {
      const site = siteById.get(h.siteId);
      if (site?.coordinates == null) throw new Error(`site ${h.siteId} has no coordinates to measure around`);
      hosts.push({ h, site, truth: site.coordinates });
    }
  }
  const n = hosts.length;
  const bySite = new Map<string, number[]>();
  const byCell = new Map<string, number[]>();
  hosts.forEach(({ h, truth }, i) => {
    const list = bySite.get(h.siteId);
    if (list === undefined) bySite.set(h.siteId, [i]);
    else list.push(i);
    const cell = `${Math.floor(truth.x / CELL_US)}:${Math.floor(truth.y / CELL_US)}`;
    const c = byCell.get(cell);
    if (c === undefined) byCell.set(cell, [i]);
    else c.push(i);
  });
  const cellOf = hosts.map(({ truth }) =>
    byCell.get(`${Math.floor(truth.x / CELL_US)}:${Math.floor(truth.y / CELL_US)}`)!,
  );
  const behindNat = hosts.map(({ h }) => bySite.get(h.siteId)!.length === 1 && rnd() < relayedShare);

  const between = (lo: number, hi: number): number => lo + rnd() * (hi - lo);
  const when = (): string => new Date(at - Math.floor(rnd() * 3_600_000)).toISOString();
  const seen = new Set<number>();
  const links: LinkInput[] = [];
  const measure = (i: number, j: number): void => {
    if (i === j) return;
    const key = i < j ? i * n + j : j * n + i;
    if (seen.has(key)) return;
    seen.add(key);
    const a = hosts[i]!;
    const b = hosts[j]!;
    const nic = Math.min(a.h.nicBandwidthBps, b.h.nicBandwidthBps);
    if (a.h.siteId === b.h.siteId) {
      links.push({
        a: a.h.id,
        b: b.h.id,
        bandwidthBps: Math.min(nic, a.site.lanBandwidthBps) * between(0.7, 0.95),
        rttUs: a.site.lanRttUs * between(0.8, 1.5),
        measuredAt: when(),
      });
      return;
    }
    const distance =
      Math.hypot(a.truth.x - b.truth.x, a.truth.y - b.truth.y) + a.truth.height + b.truth.height;
    const sameCell = cellOf[i] === cellOf[j];
    const path = sameCell ? 10e9 : [1e9, 2.5e9, 5e9, 10e9][Math.floor(rnd() * 4)]!;
    if (behindNat[i] || behindNat[j]) {
      links.push({
        a: a.h.id,
        b: b.h.id,
        bandwidthBps: Math.min(nic, path, between(0.2e9, 0.8e9)),
        rttUs: distance * between(1.1, 1.4) + RELAY_EXTRA_RTT_US,
        measuredAt: when(),
        relayed: true,
      });
      return;
    }
    links.push({
      a: a.h.id,
      b: b.h.id,
      bandwidthBps: Math.min(nic, path) * between(0.5, 0.9),
      rttUs: distance * between(0.95, 1.15),
      measuredAt: when(),
    });
  };
  const pick = (xs: readonly number[]): number => xs[Math.floor(rnd() * xs.length)]!;

  for (const members of bySite.values()) {
    if (members.length <= fullSite) {
      for (let x = 0; x < members.length; x++)
        for (let y = x + 1; y < members.length; y++) measure(members[x]!, members[y]!);
    } else {
      for (const i of members) for (let k = 0; k < peers; k++) measure(i, pick(members));
    }
  }
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < peers; k++) measure(i, k % 2 === 0 ? pick(cellOf[i]!) : Math.floor(rnd() * n));
  }

  // Fitted coordinates: the truth moved by the error, with the error the fit would report.
  const fitted = new Map<string, { coordinates: NetworkCoordinate; error: number }>();
  for (const { h, truth } of hosts) {
    const e = Math.min(1, error * between(0.5, 1.5));
    const scale = e * (truth.height + 2_000);
    fitted.set(h.id, {
      coordinates: {
        x: truth.x + (rnd() - 0.5) * 2 * scale,
        y: truth.y + (rnd() - 0.5) * 2 * scale,
        height: truth.height * between(1 - e, 1 + e),
      },
      error: e,
    });
  }
  return {
    providers: input.providers.map((p) => ({
      ...p,
      hosts: p.hosts.map((h) => ({
        ...h,
        coordinates: fitted.get(h.id)!.coordinates,
        coordinatesError: fitted.get(h.id)!.error,
      })),
    })),
    network: { ...input.network, hostLinks: links },
  };
};
