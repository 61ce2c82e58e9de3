/**
 * The verifier's own clock for timing an edge's answer: monotonic milliseconds (never the business
 * clock, which tests fake and which may jump). Default `performance.now()`.
 */
export interface MonotonicClock {
  nowMs(): number;
}

export const PERFORMANCE_CLOCK: MonotonicClock = { nowMs: () => performance.now() };
