import { type Rng, shuffled } from './rng';

/** One probe: `prober` measures the link to `peer`. */
export interface ProbePair {
  readonly prober: string;
  readonly peer: string;
}

/** An unordered pair's key (`a|b`, a < b): a probe either way measures the same link. */
export const pairKey = (a: string, b: string): string => (a < b ? `${a}|${b}` : `${b}|${a}`);

export interface SampleOptions {
  /** Peers each host probes per round. */
  readonly k: number;
  readonly rng: Rng;
  /** Probes a host may receive per round. Default `k`, so that a host takes part in at most 2k probes. */
  readonly maxInbound?: number;
  /**
   * When each pair was last measured (ms since epoch, by `pairKey`); pairs measured longest ago — or
   * never — are preferred, so coverage rotates over rounds while each round stays bounded.
   */
  readonly lastMeasured?: ReadonlyMap<string, number>;
  /** Pairs that must not be probed (a host busy with a job, a pair with no path). */
  readonly exclude?: (prober: string, peer: string) => boolean;
  /**
   * Pairs to probe before the others (still within the bounds): e.g. hosts whose coordinates put them
   * on one LAN but that were never measured — a probe confirms the same site.
   */
  readonly prefer?: (prober: string, peer: string) => boolean;
}

/**
 * Chooses a bounded sample of peers for every host: at most `k` probes out and `maxInbound` in per
 * host, no pair twice (either direction), never all pairs — O(n·k) probes per round instead of
 * O(n²). Within the bounds the choice is random (seeded): preferred pairs first, then the least
 * recently measured.
 */
export const samplePeers = (hosts: readonly string[], options: SampleOptions): ProbePair[] => {
  const k = Math.max(0, Math.floor(options.k));
  const maxInbound = options.maxInbound ?? k;
  const inbound = new Map<string, number>();
  const chosen = new Set<string>();
  const pairs: ProbePair[] = [];
  const order = shuffled([...new Set(hosts)].sort(), options.rng);
  for (const prober of order) {
    const candidates = shuffled(
      order.filter((peer) => peer !== prober),
      options.rng,
    ).sort(
      (p, q) =>
        Number(options.prefer?.(prober, q) ?? false) - Number(options.prefer?.(prober, p) ?? false) ||
        (options.lastMeasured?.get(pairKey(prober, p)) ?? -Infinity) -
          (options.lastMeasured?.get(pairKey(prober, q)) ?? -Infinity),
    );
    let out = 0;
    for (const peer of candidates) {
      if (out >= k) break;
      const key = pairKey(prober, peer);
      if (chosen.has(key) || (inbound.get(peer) ?? 0) >= maxInbound) continue;
      if (options.exclude?.(prober, peer)) continue;
      chosen.add(key);
      inbound.set(peer, (inbound.get(peer) ?? 0) + 1);
      pairs.push({ prober, peer });
      out++;
    }
  }
  return pairs;
};

/**
 * Splits probes into rounds in which every host takes part in at most one probe, so that two
 * throughput transfers never share a host's link (they would measure half the rate each). Greedy
 * edge colouring: at most 2Δ − 1 rounds for hosts in at most Δ probes.
 */
export const probeRounds = (pairs: readonly ProbePair[]): ProbePair[][] => {
  const rounds: { pairs: ProbePair[]; busy: Set<string> }[] = [];
  for (const pair of pairs) {
    let round = rounds.find((r) => !r.busy.has(pair.prober) && !r.busy.has(pair.peer));
    if (round === undefined) {
      round = { pairs: [], busy: new Set() };
      rounds.push(round);
    }
    round.pairs.push(pair);
    round.busy.add(pair.prober);
    round.busy.add(pair.peer);
  }
  return rounds.map((r) => r.pairs);
};
