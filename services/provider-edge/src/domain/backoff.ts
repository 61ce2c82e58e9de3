/** Exponential backoff with full jitter (AWS architecture blog): a crowd of edges does not reconnect in step. */
export interface Backoff {
  /** First delay, in ms. */
  readonly initialMs: number;
  /** Longest delay, in ms. */
  readonly maxMs: number;
}

/** The default: 250 ms, doubling up to 30 s. */
export const DEFAULT_BACKOFF: Backoff = { initialMs: 250, maxMs: 30_000 };

/**
 * The wait before attempt `attempt` (1-based) after failures: a random point in
 * `[0, min(max, initial × 2^(attempt-1))]`, with `random` in [0, 1) supplied by the caller.
 */
export const backoffMs = (attempt: number, random: number, policy: Backoff = DEFAULT_BACKOFF): number => {
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.max(1, Math.floor(ceiling * Math.min(0.999_999, Math.max(0, random))));
};

/**
 * How long to wait between dials while disconnected, `elapsedMs` after the connection was lost: a
 * quarter of the outage so far, between `initialMs` and `maxMs`, with jitter. (nats.js asks before
 * every turn of its dial loop, not per failed dial, so the wait is a function of the outage's age.)
 */
export const reconnectWaitMs = (
  elapsedMs: number,
  random: number,
  policy: Backoff = DEFAULT_BACKOFF,
): number => {
  const base = Math.min(policy.maxMs, Math.max(policy.initialMs, Math.floor(Math.max(0, elapsedMs) / 4)));
  return Math.max(1, Math.floor(base * (0.5 + Math.min(0.999_999, Math.max(0, random)) / 2)));
};
