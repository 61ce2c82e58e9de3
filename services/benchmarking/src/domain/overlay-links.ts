import { Ipv4AddressSchema, type LaunchedRank, type PairPath } from '@gpunet/contracts';
import { isSameSite, type LinkMeasurement, type LinkOptions, validityOf } from './links';

/**
 * The hosts of one job's overlay, by overlay address, from its launch's ranks: address → edge id
 * (benchmarking's host id, the provider's). Only IPv4 addresses can be overlay addresses (a job on
 * host networking lists its hosts' own addresses, or host ids, and has no path report to resolve).
 * Several ranks of one host share its address; an address two edges claim is inconsistent input and
 * is left out, so that no pair on it is attributed to the wrong host.
 */
export const overlayHostsOf = (
  ranks: readonly Pick<LaunchedRank, 'providerId' | 'address'>[],
): Map<string, string> => {
  const hosts = new Map<string, string>();
  const conflicting = new Set<string>();
  for (const { address, providerId } of ranks) {
    if (!Ipv4AddressSchema.safeParse(address).success) continue;
    const known = hosts.get(address);
    if (known !== undefined && known !== providerId) conflicting.add(address);
    else hosts.set(address, providerId);
  }
  for (const address of conflicting) hosts.delete(address);
  return hosts;
};

/** Why a pair of a path report yielded no link. */
export type OverlayPairSkip =
  /** Through the job's relay, but no probe answered with a round trip. */
  | 'relayed-no-rtt'
  /** The two ends disagree (one direct, one relayed): neither figure is the hosts' network for sure. */
  | 'mixed'
  | 'unreachable'
  /** An end has not reported. */
  | 'unknown'
  /** Direct, but no probe answered with a round trip. */
  | 'no-rtt'
  /** An address the job's launch does not name (or names inconsistently). */
  | 'unknown-host'
  /** Both addresses belong to one host: not a link between hosts. */
  | 'same-host';

export interface OverlayLinks {
  /** Two per linked pair, one each way (as direct probes key links: `a` sent, `b` received). */
  readonly links: LinkMeasurement[];
  readonly skipped: { readonly a: string; readonly b: string; readonly reason: OverlayPairSkip }[];
}

/**
 * The link measurements in one job's overlay path report (`overlay.paths-reported`), `path:
 * 'overlay'`. A pair that both ends reach **directly** is a link of the two hosts' own network: its
 * RTT (the smaller of the two ends' authenticated pings) and each direction's rate (the burst one end
 * sent, as the other end received it), WireGuard included; the same-site rule is the direct probes'
 * (`isSameSite`). A **relayed** pair is measured too, marked `relayed`: its figures are the way
 * through the job's relay — what a job on that pair gets, which the scheduler needs — but not the
 * hosts' network, so benchmarking keeps them out of its links projection and coordinate fit (a
 * relayed RTT would pull the two hosts' coordinates apart); it is never same-site. Mixed,
 * unreachable and unknown pairs yield none, like a peer that did not answer a direct probe.
 */
export const overlayLinkMeasurements = (
  pairs: readonly PairPath[],
  hostOf: ReadonlyMap<string, string>,
  options: LinkOptions,
): OverlayLinks => {
  const links: LinkMeasurement[] = [];
  const skipped: OverlayLinks['skipped'][number][] = [];
  for (const pair of pairs) {
    const reason = skipReason(pair, hostOf);
    if (reason !== null) {
      skipped.push({ a: pair.a, b: pair.b, reason });
      continue;
    }
    const rttUs = pair.rttMs! * 1000;
    const relayed = pair.path === 'relayed';
    const common = {
      rttUs: Math.round(rttUs),
      sameSite: !relayed && isSameSite(rttUs, options.lanRttUs),
      path: 'overlay' as const,
      ...(relayed ? { relayed: true } : {}),
      ...validityOf(options),
    };
    const a = hostOf.get(pair.a)!;
    const b = hostOf.get(pair.b)!;
    links.push(
      { a, b, ...common, throughputBitsPerSecond: pair.aToBBps },
      { a: b, b: a, ...common, throughputBitsPerSecond: pair.bToABps },
    );
  }
  return { links, skipped };
};

const skipReason = (pair: PairPath, hostOf: ReadonlyMap<string, string>): OverlayPairSkip | null => {
  if (pair.path !== 'direct' && pair.path !== 'relayed') return pair.path;
  if (pair.rttMs === null) return pair.path === 'relayed' ? 'relayed-no-rtt' : 'no-rtt';
  const a = hostOf.get(pair.a);
  const b = hostOf.get(pair.b);
  if (a === undefined || b === undefined) return 'unknown-host';
  return a === b ? 'same-host' : null;
};
