import type { PayloadOf, ProbeEndpoint, ProbeLinksOnEdge } from '@gpunet/contracts';
import {
  type Coordinate,
  pairKey,
  predictRtt,
  type ProbePair,
  probeRounds,
  type Rng,
  samplePeers,
} from '@gpunet/netcoord';

export type ProbeRequest = PayloadOf<typeof ProbeLinksOnEdge>;

/** A host that may take part in link probes. */
export interface ProbeHost {
  readonly id: string;
  /** Where its probe responder answers (its reported addresses × the configured probe ports). */
  readonly endpoints: readonly ProbeEndpoint[];
  /** A job holds it: it neither probes nor is probed unless `allowWhileBusy`. */
  readonly busy: boolean;
}

export interface ProbeBoundsConfig {
  readonly rttSamples: number;
  readonly rttTimeoutMs: number;
  readonly throughputMaxBytes: number;
  readonly throughputMaxMs: number;
}

export interface ProbePlanOptions {
  /** Peers each host probes per cycle (RTT). */
  readonly k: number;
  /** Of those, how many also get a throughput transfer. Default 1. */
  readonly throughputPerHost?: number;
  readonly rng: Rng;
  /** When each pair was last measured (`pairKey` → ms): least recently measured pairs first. */
  readonly lastMeasured?: ReadonlyMap<string, number>;
  /** Pairs to probe first (see `suspectedLanPairs`). */
  readonly prefer?: (prober: string, peer: string) => boolean;
  readonly bounds: ProbeBoundsConfig;
  /** Busy hosts take part too (the edge's own policy must agree). Default false. */
  readonly allowWhileBusy?: boolean;
  /** Subject-token-safe prefix of request ids (`cycle-2030…`). */
  readonly idPrefix: string;
}

/** One dispatch: requests that may run at the same time. */
export interface ProbeRound {
  readonly requests: readonly { readonly prober: string; readonly request: ProbeRequest }[];
}

/**
 * One probe cycle, as rounds the service dispatches one after another:
 *
 * 1. RTT to a bounded sample of peers (`samplePeers`: ≤ k out, ≤ k in per host) — every host at once,
 *    since UDP echoes are tiny and never queue behind each other.
 * 2. Throughput transfers for `throughputPerHost` of each host's pairs, in rounds where no host takes
 *    part in two transfers (`probeRounds`), so that no two transfers share — and halve — a link.
 *
 * Busy hosts are left out unless allowed. Bytes and time of every transfer are bounded by `bounds`.
 */
export const planProbeRounds = (hosts: readonly ProbeHost[], options: ProbePlanOptions): ProbeRound[] => {
  const byId = new Map(hosts.map((h) => [h.id, h]));
  const eligible = hosts.filter(
    (h) => h.endpoints.length > 0 && (options.allowWhileBusy === true || !h.busy),
  );
  const pairs = samplePeers(
    eligible.map((h) => h.id),
    {
      k: options.k,
      rng: options.rng,
      ...(options.lastMeasured ? { lastMeasured: options.lastMeasured } : {}),
      ...(options.prefer ? { prefer: options.prefer } : {}),
    },
  );
  const base = {
    rttSamples: options.bounds.rttSamples,
    rttTimeoutMs: options.bounds.rttTimeoutMs,
    throughputMaxBytes: options.bounds.throughputMaxBytes,
    throughputMaxMs: options.bounds.throughputMaxMs,
    allowWhileBusy: options.allowWhileBusy === true,
  };
  const target = (peer: string, throughput: boolean) => ({
    peerId: peer,
    endpoints: [...byId.get(peer)!.endpoints],
    throughput,
  });
  const rounds: ProbeRound[] = [];
  const byProber = new Map<string, string[]>();
  for (const p of pairs) byProber.set(p.prober, [...(byProber.get(p.prober) ?? []), p.peer]);
  const rttRequests = [...byProber].map(([prober, peers], i) => ({
    prober,
    request: {
      requestId: `${options.idPrefix}-rtt-${i}`,
      targets: peers.map((peer) => target(peer, false)),
      ...base,
    },
  }));
  if (rttRequests.length > 0) rounds.push({ requests: rttRequests });
  const perHost = options.throughputPerHost ?? 1;
  const transfers: ProbePair[] = [];
  for (const [prober, peers] of byProber)
    for (const peer of peers.slice(0, perHost)) transfers.push({ prober, peer });
  probeRounds(transfers).forEach((round, r) => {
    rounds.push({
      requests: round.map((pair, i) => ({
        prober: pair.prober,
        request: {
          requestId: `${options.idPrefix}-tp-${r}-${i}`,
          targets: [target(pair.peer, true)],
          ...base,
          // RTT was measured in the first round; a few echoes keep the endpoint choice honest.
          rttSamples: Math.min(3, base.rttSamples),
        },
      })),
    });
  });
  return rounds;
};

/** The pairs a plan measures (for coverage bookkeeping and tests). */
export const plannedPairs = (rounds: readonly ProbeRound[]): Set<string> =>
  new Set(
    rounds.flatMap((r) =>
      r.requests.flatMap((q) => q.request.targets.map((t) => pairKey(q.prober, t.peerId))),
    ),
  );

/**
 * Pairs the coordinates put on one LAN (predicted RTT below `lanRttUs`) that were never measured:
 * same-site detection needs a measured link, so the next cycle probes these first.
 */
export const suspectedLanPairs = (
  coordinates: ReadonlyMap<string, Coordinate>,
  measured: ReadonlySet<string>,
  lanRttUs: number,
): Set<string> => {
  const ids = [...coordinates.keys()].sort();
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i++)
    for (let j = i + 1; j < ids.length; j++) {
      const key = pairKey(ids[i]!, ids[j]!);
      if (!measured.has(key) && predictRtt(coordinates.get(ids[i]!)!, coordinates.get(ids[j]!)!) < lanRttUs)
        out.add(key);
    }
  return out;
};
