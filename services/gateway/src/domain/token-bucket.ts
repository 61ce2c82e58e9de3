/**
 * A token bucket per API key: `burst` requests at once, refilled at `ratePerSecond`. Pure: the
 * caller passes the time, so tests need no clock.
 */
export interface BucketState {
  readonly tokens: number;
  readonly updatedAtMs: number;
}

export interface BucketLimits {
  readonly ratePerSecond: number;
  readonly burst: number;
}

export type TakeResult =
  | { readonly ok: true; readonly state: BucketState }
  | { readonly ok: false; readonly state: BucketState; readonly retryAfterSeconds: number };

export const takeToken = (
  state: BucketState | undefined,
  limits: BucketLimits,
  nowMs: number,
): TakeResult => {
  const previous = state ?? { tokens: limits.burst, updatedAtMs: nowMs };
  const elapsed = Math.max(0, nowMs - previous.updatedAtMs) / 1000;
  const tokens = Math.min(limits.burst, previous.tokens + elapsed * limits.ratePerSecond);
  if (tokens >= 1) return { ok: true, state: { tokens: tokens - 1, updatedAtMs: nowMs } };
  const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / limits.ratePerSecond));
  return { ok: false, state: { tokens, updatedAtMs: nowMs }, retryAfterSeconds };
};
