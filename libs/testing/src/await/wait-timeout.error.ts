/** An awaiter gave up: what it waited for did not happen in time. Says what it saw instead. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  readonly code = 'WAIT_TIMEOUT' as const;
  constructor(
    /** What was awaited, in words. */
    readonly description: string,
    readonly timeoutMs: number,
    /** What was observed last (a probe's value, the collected items), already in words. */
    readonly observed: string,
    options?: { cause?: unknown },
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${description}; ${observed}`, options);
  }
}

export const isWaitTimeout = (e: unknown): e is WaitTimeoutError => e instanceof WaitTimeoutError;

/** A short, single-line rendering of a value for timeout messages. */
export const describeValue = (value: unknown, maxLength = 500): string => {
  let text: string;
  if (value instanceof Error) text = `${value.name}: ${value.message}`;
  else if (typeof value === 'bigint') text = `${value}n`;
  else {
    try {
      text =
        JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > maxLength ? `${text.slice(0, maxLength)}… (${text.length} chars)` : text;
};
