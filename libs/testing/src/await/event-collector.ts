import { describeValue, WaitTimeoutError } from './wait-timeout.error';

/** How long a collector waits. */
export interface CollectorWaitOptions {
  /** Give up after this many ms. Default 10 000. */
  readonly timeoutMs?: number;
  /** What is awaited, in words, for the timeout error. Default: derived from the call. */
  readonly description?: string;
}

interface Waiter {
  /** Settles the waiter if its condition now holds; true when it did. */
  check(): boolean;
}

/**
 * Collects items a test receives (messages from a subscription, events a handler emits) and lets the
 * test await the one it expects. Waiting is push-driven: each `push` re-checks the waiters, nothing
 * polls. A wait that times out names what it waited for and lists what it saw.
 *
 * ```ts
 * const seen = new EventCollector<JobPlaced>('job.placed');
 * sub.callback = (msg) => seen.push(decode(msg));
 * const placed = await seen.waitFor((e) => e.jobId === jobId, { timeoutMs: 5_000 });
 * ```
 */
export class EventCollector<T> {
  readonly #items: T[] = [];
  readonly #waiters = new Set<Waiter>();

  /** @param name what is collected, for timeout messages. Default `'items'`. */
  constructor(readonly name = 'items') {}

  /** Adds an item and settles every wait it satisfies. Bound: pass `collector.push` as a callback. */
  readonly push = (item: T): void => {
    this.#items.push(item);
    for (const waiter of this.#waiters) if (waiter.check()) this.#waiters.delete(waiter);
  };

  /** Everything pushed so far, oldest first (a copy). */
  get items(): readonly T[] {
    return [...this.#items];
  }

  get length(): number {
    return this.#items.length;
  }

  /** Forgets the items collected so far (pending waits stay pending). */
  clear(): void {
    this.#items.length = 0;
  }

  /** Resolves with the first item (already collected or still to come) that satisfies `predicate`. */
  waitFor(predicate: (item: T) => boolean, options: CollectorWaitOptions = {}): Promise<T> {
    return this.#wait(
      () => {
        const index = this.#items.findIndex(predicate);
        return index < 0 ? undefined : { value: this.#items[index] as T };
      },
      options.description ?? `an item matching ${predicate.name || 'the predicate'}`,
      options,
    );
  }

  /** Resolves with all items collected once there are at least `count`. */
  waitForCount(count: number, options: CollectorWaitOptions = {}): Promise<readonly T[]> {
    return this.#wait(
      () => (this.#items.length >= count ? { value: this.items } : undefined),
      options.description ?? `${count} ${this.name}`,
      options,
    );
  }

  /** Resolves with the matching items once at least `count` items satisfy `predicate`. */
  waitForMatching(
    predicate: (item: T) => boolean,
    count: number,
    options: CollectorWaitOptions = {},
  ): Promise<T[]> {
    return this.#wait(
      () => {
        const matching = this.#items.filter(predicate);
        return matching.length >= count ? { value: matching } : undefined;
      },
      options.description ?? `${count} ${this.name} matching ${predicate.name || 'the predicate'}`,
      options,
    );
  }

  #wait<R>(
    condition: () => { value: R } | undefined,
    description: string,
    { timeoutMs = 10_000 }: CollectorWaitOptions,
  ): Promise<R> {
    const now = condition();
    if (now !== undefined) return Promise.resolve(now.value);
    return new Promise<R>((resolve, reject) => {
      const waiter: Waiter = {
        check: () => {
          const met = condition();
          if (met === undefined) return false;
          clearTimeout(timer);
          resolve(met.value);
          return true;
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        const seen = this.#items.length;
        reject(
          new WaitTimeoutError(
            `${description} in ${this.name}`,
            timeoutMs,
            `saw ${seen} item${seen === 1 ? '' : 's'}${seen === 0 ? '' : `: ${describeValue(this.#items, 2_000)}`}`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }
}
