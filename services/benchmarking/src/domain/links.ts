import type { LinkProbeResult, PayloadOf, LinkMeasured } from '@gpunet/contracts';

export type LinkMeasurement = PayloadOf<typeof LinkMeasured>;

export interface LinkOptions {
  /** When the report says the probes ran. */
  readonly measuredAtMs: number;
  /** How long a measurement stays valid. */
  readonly ttlMs: number;
  /** RTT below which the two hosts count as one LAN (same site), µs. */
  readonly lanRttUs: number;
}

/** The same-site rule of every link, however measured: an RTT below the LAN threshold is one LAN. */
export const isSameSite = (rttUs: number, lanRttUs: number): boolean => rttUs < lanRttUs;

/** A measurement's validity: from when it was measured, for the link TTL. */
export const validityOf = (options: LinkOptions): Pick<LinkMeasurement, 'measuredAt' | 'expiresAt'> => ({
  measuredAt: new Date(options.measuredAtMs).toISOString(),
  expiresAt: new Date(options.measuredAtMs + options.ttlMs).toISOString(),
});

/**
 * The link measurements in one edge's probe report: one per peer that answered, with the minimum RTT
 * (queueing removed) and the transfer's throughput when one ran. Peers that did not answer yield none
 * (no path is not a measurement of a path).
 */
export const linkMeasurements = (
  prober: string,
  results: readonly LinkProbeResult[],
  options: LinkOptions,
): LinkMeasurement[] =>
  results
    .filter((r) => r.outcome === 'ok' && r.rtt !== null && r.peerId !== prober)
    .map((r) => ({
      a: prober,
      b: r.peerId,
      rttUs: Math.round(r.rtt!.minUs),
      throughputBitsPerSecond: r.throughput === null ? null : Math.round(r.throughput.bitsPerSecond),
      sameSite: isSameSite(r.rtt!.minUs, options.lanRttUs),
      path: r.path,
      ...validityOf(options),
    }));
