/** Exponential backoff with full jitter; `random` is injectable so tests are deterministic. */
export interface BackoffPolicy {
  /** First delay in ms. Default 100. */
  readonly initialMs?: number;
  /** Largest delay in ms. Default 30 000. */
  readonly maxMs?: number;
  /** Growth per attempt. Default 2. */
  readonly factor?: number;
}

export const backoffDelay = (
  attempt: number,
  policy: BackoffPolicy = {},
  random: () => number = Math.random,
): number => {
  const { initialMs = 100, maxMs = 30_000, factor = 2 } = policy;
  const ceiling = Math.min(maxMs, initialMs * factor ** Math.max(0, attempt - 1));
  // Half fixed, half jitter: never zero, and replicas retrying together spread out.
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
};
