import type { Clock } from '@gpunet/contracts';

/** Handle of a timer scheduled on a `FakeClock`. */
export type FakeTimerId = number;

interface FakeTimer {
  readonly id: FakeTimerId;
  /** Insertion order: timers due at the same instant fire in the order they were scheduled. */
  readonly seq: number;
  at: number;
  readonly intervalMs: number | undefined;
  readonly callback: () => void;
}

/** Anything `new Date(...)` accepts as one argument. */
export type DateInput = Date | number | string;

const toMs = (input: DateInput): number => {
  const ms = new Date(input).getTime();
  if (Number.isNaN(ms)) throw new RangeError(`FakeClock: invalid date ${String(input)}`);
  return ms;
};

/** The default start of every `FakeClock`: a fixed, round instant, so test output is stable. */
export const FAKE_CLOCK_EPOCH = '2030-01-01T00:00:00.000Z';

/**
 * A clock that moves only when the test says so, with timers that fire as it moves.
 *
 * Time never passes on its own: `advance(ms)` walks forward, firing each due timer at its own
 * instant (so `now()` inside a callback is the timer's due time), in due order and, for equal due
 * times, in scheduling order. Timers that callbacks schedule fire in the same `advance` if they fall
 * due before its end. Nothing here touches real timers, so a test never waits.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #nextId = 1;
  readonly #timers = new Map<FakeTimerId, FakeTimer>();

  /** @param start the initial time. Default `FAKE_CLOCK_EPOCH` (2030-01-01T00:00:00Z). */
  constructor(start: DateInput = FAKE_CLOCK_EPOCH) {
    this.#now = toMs(start);
  }

  now(): Date {
    return new Date(this.#now);
  }

  /** The current time in epoch milliseconds. */
  nowMs(): number {
    return this.#now;
  }

  /**
   * Moves the clock forward by `ms` (≥ 0), firing every timer that falls due on the way.
   * A callback that throws stops the walk at its due time and the error propagates.
   */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`FakeClock.advance: ms must be ≥ 0, got ${ms}`);
    this.#runUntil(this.#now + ms);
  }

  /**
   * Like `advance`, but after each timer gives promise callbacks and I/O callbacks one turn of the
   * event loop, so async work a timer starts (a retry's `await`) settles before the next timer fires.
   */
  async advanceAsync(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`FakeClock.advanceAsync: ms must be ≥ 0, got ${ms}`);
    const target = this.#now + ms;
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const next = this.#nextDue(target);
      if (next === undefined) break;
      this.#fire(next);
    }
    this.#now = target;
  }

  /**
   * Sets the time. Moving forward fires due timers exactly like `advance`; moving backward (a
   * wall-clock correction) fires nothing and leaves pending timers at their absolute due times.
   */
  set(date: DateInput): void {
    const target = toMs(date);
    if (target >= this.#now) this.#runUntil(target);
    else this.#now = target;
  }

  /** Schedules `callback` to run once the clock has advanced `ms` (negative counts as 0). */
  setTimeout(callback: () => void, ms = 0): FakeTimerId {
    return this.#schedule(callback, ms, undefined);
  }

  clearTimeout(id: FakeTimerId | undefined): void {
    if (id !== undefined) this.#timers.delete(id);
  }

  /** Schedules `callback` every `ms` (at least 1) until cleared. */
  setInterval(callback: () => void, ms: number): FakeTimerId {
    const period = Math.max(1, ms);
    return this.#schedule(callback, period, period);
  }

  clearInterval(id: FakeTimerId | undefined): void {
    this.clearTimeout(id);
  }

  /** Resolves once the clock has been advanced by `ms`: a fake `sleep` to inject into code under test. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }

  /** How many timers are scheduled and not yet fired or cleared. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  /** Due time (epoch ms) of the next timer, or `undefined` when none is pending. */
  nextTimerAt(): number | undefined {
    return this.#nextDue(Number.POSITIVE_INFINITY)?.at;
  }

  /**
   * Advances to each pending timer in turn until none is left; intervals would never end, so this
   * stops with an error after `maxTimers` firings (default 1000).
   */
  runAll(maxTimers = 1000): void {
    for (let fired = 0; ; fired++) {
      const next = this.#nextDue(Number.POSITIVE_INFINITY);
      if (next === undefined) return;
      if (fired >= maxTimers) {
        throw new Error(
          `FakeClock.runAll: still ${this.#timers.size} timer(s) after ${maxTimers} firings (an interval?)`,
        );
      }
      this.#fire(next);
    }
  }

  #schedule(callback: () => void, ms: number, intervalMs: number | undefined): FakeTimerId {
    const id = this.#nextId++;
    const delay = Number.isFinite(ms) ? Math.max(0, ms) : 0;
    this.#timers.set(id, { id, seq: this.#seq++, at: this.#now + delay, intervalMs, callback });
    return id;
  }

  #nextDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers.values()) {
      if (t.at > limit) continue;
      if (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }

  #runUntil(target: number): void {
    for (let next = this.#nextDue(target); next !== undefined; next = this.#nextDue(target)) this.#fire(next);
    this.#now = target;
  }

  #fire(timer: FakeTimer): void {
    this.#now = Math.max(this.#now, timer.at);
    if (timer.intervalMs === undefined) {
      this.#timers.delete(timer.id);
    } else {
      // Re-queue before the callback runs, so the callback can clear its own interval.
      this.#timers.delete(timer.id);
      this.#timers.set(timer.id, { ...timer, seq: this.#seq++, at: timer.at + timer.intervalMs });
    }
    timer.callback();
  }
}
