import { setTimeout as sleep } from 'node:timers/promises';
import { describeValue, WaitTimeoutError } from './wait-timeout.error';

/** How long and how often an awaiter polls. */
export interface WaitOptions {
  /** Give up after this many ms. Default 10 000. */
  readonly timeoutMs?: number;
  /** What is awaited, in words, for the timeout error ("stream t_x_EVENTS to hold 3 messages"). */
  readonly description?: string;
  /** First pause between polls in ms; it doubles after each poll. Default 5. */
  readonly intervalMs?: number;
  /** Longest pause between polls in ms. Default 250. */
  readonly maxIntervalMs?: number;
  /** Gives up early: the wait rejects with the signal's reason as soon as it aborts. */
  readonly signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** A value a probe may return: `false`, `null`, `undefined` (and other falsy values) mean "not yet". */
type Probe<T> = () => T | Promise<T>;

/**
 * Polls `probe` until it returns a truthy value and resolves with that value. For conditions in
 * systems the test cannot subscribe to (a row in Postgres, a consumer's ack count); when the test
 * can be told, use an `EventCollector` instead. A probe that throws counts as "not yet" (the system
 * may still be starting); the last error is the timeout error's `cause`.
 *
 * Polling starts immediately and backs off exponentially, so fast conditions resolve fast and slow
 * ones do not hammer the system; the whole wait is bounded by `timeoutMs`.
 */
export const waitFor = async <T>(probe: Probe<T>, options: WaitOptions = {}): Promise<NonNullable<T>> => {
  const {
    timeoutMs = DEFAULT_TIMEOUT_MS,
    description = 'a condition',
    intervalMs = 5,
    maxIntervalMs = 250,
    signal,
  } = options;
  const deadline = performance.now() + timeoutMs;
  let delay = Math.max(1, intervalMs);
  let attempts = 0;
  let last: { value: T } | { error: unknown } | undefined;
  for (;;) {
    attempts++;
    signal?.throwIfAborted();
    try {
      const value = await probe();
      if (value) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    const left = deadline - performance.now();
    if (left <= 0) {
      const observed =
        last === undefined
          ? 'the probe never completed'
          : 'error' in last
            ? `last probe threw ${describeValue(last.error)}`
            : `last probe returned ${describeValue(last.value)}`;
      throw new WaitTimeoutError(description, timeoutMs, `${observed} (${attempts} attempts)`, {
        cause: last !== undefined && 'error' in last ? last.error : undefined,
      });
    }
    await pause(Math.min(delay, left), signal);
    delay = Math.min(delay * 2, maxIntervalMs);
  }
};

/** Sleeps, but rejects with the signal's own reason (not an AbortError) when it aborts. */
const pause = async (ms: number, signal: AbortSignal | undefined): Promise<void> => {
  try {
    await sleep(ms, undefined, signal === undefined ? undefined : { signal });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
};

/**
 * Retries `assertion` until it stops throwing, and resolves with its result. On timeout it throws
 * the last failure itself (its message prefixed with the wait), so vitest still shows its diff.
 *
 * ```ts
 * await eventually(async () => expect(await countRows()).toBe(3), { timeoutMs: 5_000 });
 * ```
 */
export const eventually = async <T>(
  assertion: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<T> => {
  const {
    timeoutMs = DEFAULT_TIMEOUT_MS,
    description = 'an assertion to pass',
    intervalMs = 5,
    maxIntervalMs = 250,
    signal,
  } = options;
  const deadline = performance.now() + timeoutMs;
  let delay = Math.max(1, intervalMs);
  for (let attempts = 1; ; attempts++) {
    signal?.throwIfAborted();
    try {
      return await assertion();
    } catch (error) {
      const left = deadline - performance.now();
      if (left <= 0) {
        const prefix = `eventually: timed out after ${timeoutMs} ms (${attempts} attempts) waiting for ${description}`;
        if (error instanceof Error) {
          error.message = `${prefix}: ${error.message}`;
          throw error;
        }
        throw new WaitTimeoutError(description, timeoutMs, `last attempt threw ${describeValue(error)}`, {
          cause: error,
        });
      }
      await pause(Math.min(delay, left), signal);
      delay = Math.min(delay * 2, maxIntervalMs);
    }
  }
};
