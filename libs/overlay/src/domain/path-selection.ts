import type { OverlayCandidate, PathKind } from '@gpunet/contracts';

/** A candidate endpoint of a peer that answered an authenticated probe. */
export interface ConfirmedCandidate {
  readonly endpoint: string;
  readonly kind: OverlayCandidate['kind'];
  readonly rttMs: number;
}

export interface PathChoice {
  readonly path: PathKind;
  /** The peer's endpoint WireGuard sends to (direct). */
  readonly endpoint: string | null;
  readonly rttMs: number | null;
}

/**
 * The path to one peer: the confirmed candidate with the lowest RTT (a host candidate — same LAN —
 * wins ties within 10 %: it does not depend on a NAT mapping staying alive), else the relay when the
 * peer answered there, else unreachable.
 */
export const choosePath = (
  confirmed: readonly ConfirmedCandidate[],
  relay: { readonly rttMs: number } | null,
): PathChoice => {
  const best = [...confirmed].sort((x, y) => {
    const within = Math.abs(x.rttMs - y.rttMs) <= 0.1 * Math.max(x.rttMs, y.rttMs);
    if (within && x.kind !== y.kind) return x.kind === 'host' ? -1 : 1;
    return x.rttMs - y.rttMs;
  })[0];
  if (best) return { path: 'direct', endpoint: best.endpoint, rttMs: best.rttMs };
  if (relay) return { path: 'relayed', endpoint: null, rttMs: relay.rttMs };
  return { path: 'unreachable', endpoint: null, rttMs: null };
};

/**
 * The NAT's mapping behaviour from the reflexive endpoints two STUN ports reported for one local
 * port (`local` are the edge's own addresses).
 */
export const classifyNat = (
  mapped: readonly string[],
  local: readonly string[],
  localPort: number,
): 'none' | 'endpoint-independent' | 'endpoint-dependent' | 'unknown' => {
  if (mapped.length === 0) return 'unknown';
  if (mapped.some((m) => local.some((a) => m === `${a}:${localPort}`))) return 'none';
  if (mapped.length < 2) return 'unknown';
  return new Set(mapped).size === 1 ? 'endpoint-independent' : 'endpoint-dependent';
};
