/**
 * A provider's reliability, 0 … 1: how far the scheduler should trust what it says. New providers
 * start at `INITIAL` (unverified, not suspect). A verified benchmark closes a quarter of the gap to
 * 1; a mismatch between claim and measurement cuts the score to 40%; a benchmark that failed on the
 * edge or never reported costs 10%. A declined request (busy with a job) costs nothing — that is the
 * provider's policy at work.
 */
export const RELIABILITY = {
  INITIAL: 0.8,
  VERIFIED_GAIN: 0.25,
  MISMATCH_FACTOR: 0.4,
  FAILURE_FACTOR: 0.9,
} as const;

const clamp = (x: number): number => Math.min(1, Math.max(0, Number(x.toFixed(4))));

export const afterVerified = (score: number): number =>
  clamp(score + (1 - score) * RELIABILITY.VERIFIED_GAIN);
export const afterMismatch = (score: number): number => clamp(score * RELIABILITY.MISMATCH_FACTOR);
export const afterFailure = (score: number): number => clamp(score * RELIABILITY.FAILURE_FACTOR);
