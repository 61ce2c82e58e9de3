/** What liveness needs to know of one provider. */
export interface LivenessRow {
  readonly providerId: string;
  readonly status: 'online' | 'offline';
  /** Last heartbeat (or report) as discovery's clock saw it; null: never. */
  readonly lastSeenAtMs: number | null;
}

export interface LivenessTransitions {
  readonly goOffline: readonly { readonly providerId: string; readonly lastSeenAtMs: number | null }[];
  readonly goOnline: readonly string[];
}

/**
 * Which providers change state at `nowMs`: an online one silent for longer than `windowMs` goes
 * offline; an offline one heard from within the window comes back. `evidenceSinceMs` is when
 * discovery could last start hearing heartbeats (its start, or its reconnect to NATS): silence before
 * it proves nothing, so nobody goes offline for discovery's own outage.
 */
export const livenessTransitions = (
  rows: readonly LivenessRow[],
  nowMs: number,
  windowMs: number,
  evidenceSinceMs = Number.NEGATIVE_INFINITY,
): LivenessTransitions => {
  const goOffline: { providerId: string; lastSeenAtMs: number | null }[] = [];
  const goOnline: string[] = [];
  for (const row of rows) {
    const seen = row.lastSeenAtMs;
    const fresh = seen !== null && nowMs - seen <= windowMs;
    if (row.status === 'online' && !fresh && nowMs - evidenceSinceMs > windowMs)
      goOffline.push({ providerId: row.providerId, lastSeenAtMs: seen });
    else if (row.status === 'offline' && fresh) goOnline.push(row.providerId);
  }
  return { goOffline, goOnline };
};
