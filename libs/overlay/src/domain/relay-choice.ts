/** A relay as edges are told about it. */
export interface RelayAddress {
  /** Stable id of the relay (its name in the deployment). */
  readonly relayId: string;
  /** Address (or name) edges connect to. */
  readonly host: string;
  /** TCP port of the framed relay protocol. */
  readonly port: number;
  /** UDP ports answering STUN Binding requests; two ports tell a symmetric NAT from a cone one. */
  readonly stunPorts: readonly number[];
  /** Connect with TLS (the relay presents a certificate for `host`, or `servername`). */
  readonly tls?: boolean;
  readonly servername?: string;
}

/**
 * FNV-1a (32 bit) followed by MurmurHash3's finalizer, which spreads FNV's weak high bits: a stable,
 * dependency-free string hash (not for security).
 */
const hash32 = (text: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
};

/**
 * The relays in the order a job's edges try them: rendezvous (highest random weight) hashing of the
 * job id over the relay ids. Every edge of a job computes the same order, so they all meet on the
 * same relay and fail over to the same next one; adding or removing a relay moves only the jobs
 * that hashed to it.
 */
export const rankRelays = <R extends { relayId: string }>(jobId: string, relays: readonly R[]): R[] =>
  relays
    .map((relay) => ({ relay, weight: hash32(`${relay.relayId}\u0000${jobId}`) }))
    .sort((a, b) => b.weight - a.weight || (a.relay.relayId < b.relay.relayId ? -1 : 1))
    .map(({ relay }) => relay);
