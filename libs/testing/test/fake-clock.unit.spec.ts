import { describe, expect, it } from 'vitest';
import { type Clock, FAKE_CLOCK_EPOCH, FakeClock, systemClock } from '../src';

const at = (clock: FakeClock): string => clock.now().toISOString();

describe('FakeClock', () => {
  it('starts at a fixed instant and moves only when told', () => {
    const clock = new FakeClock();
    expect(at(clock)).toBe(FAKE_CLOCK_EPOCH);
    expect(at(clock)).toBe(FAKE_CLOCK_EPOCH);
    clock.advance(1_500);
    expect(at(clock)).toBe('2030-01-01T00:00:01.500Z');
    clock.set('2031-06-01T12:00:00Z');
    expect(at(clock)).toBe('2031-06-01T12:00:00.000Z');
    expect(clock.nowMs()).toBe(Date.parse('2031-06-01T12:00:00Z'));
  });

  it('hands out a fresh Date each time, so callers cannot move it by mutation', () => {
    const clock = new FakeClock(0);
    clock.now().setTime(999);
    expect(clock.nowMs()).toBe(0);
  });

  it('fires timers in due order, at their due instant, and same-instant timers in scheduling order', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    const record = (name: string) => () => fired.push(`${name}@${clock.nowMs()}`);
    clock.setTimeout(record('c'), 300);
    clock.setTimeout(record('a'), 100);
    clock.setTimeout(record('b1'), 200);
    clock.setTimeout(record('b2'), 200);
    clock.advance(250);
    expect(fired).toEqual(['a@100', 'b1@200', 'b2@200']);
    expect(clock.nowMs()).toBe(250);
    clock.advance(50);
    expect(fired).toEqual(['a@100', 'b1@200', 'b2@200', 'c@300']);
  });

  it('fires timers that callbacks schedule within the same advance', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.nowMs());
      clock.setTimeout(() => fired.push(clock.nowMs()), 10);
    }, 10);
    clock.advance(25);
    expect(fired).toEqual([10, 20]);
  });

  it('does not fire cleared timers, and counts pending ones', () => {
    const clock = new FakeClock(0);
    let fired = false;
    const id = clock.setTimeout(() => (fired = true), 10);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(10);
    clock.clearTimeout(id);
    clock.clearTimeout(undefined);
    clock.advance(100);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('treats a zero or negative delay as due now (fires on the next advance, even by 0)', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(1), -5);
    clock.setTimeout(() => fired.push(2));
    expect(fired).toEqual([]);
    clock.advance(0);
    expect(fired).toEqual([1, 2]);
  });

  it('repeats intervals until cleared, and a callback may clear its own interval', () => {
    const clock = new FakeClock(0);
    const ticks: number[] = [];
    const id = clock.setInterval(() => {
      ticks.push(clock.nowMs());
      if (ticks.length === 3) clock.clearInterval(id);
    }, 100);
    clock.advance(1_000);
    expect(ticks).toEqual([100, 200, 300]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('fires due timers when set() moves forward, and none when it moves backward', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.nowMs()), 1_000);
    clock.set(-5_000);
    expect(fired).toEqual([]);
    expect(clock.nowMs()).toBe(-5_000);
    clock.set(2_000);
    expect(fired).toEqual([1_000]);
    expect(clock.nowMs()).toBe(2_000);
  });

  it('resolves sleep() once advanced past it', async () => {
    const clock = new FakeClock(0);
    let woke = false;
    const sleeping = clock.sleep(500).then(() => (woke = true));
    clock.advance(499);
    await Promise.resolve();
    expect(woke).toBe(false);
    clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);
  });

  // A retry loop as production code writes it: await a sleep, try again.
  const retryThreeTimes = async (clock: FakeClock, attempts: number[]): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      await clock.sleep(100);
      attempts.push(clock.nowMs());
    }
  };

  it('advance() is synchronous: code after an await runs once it has ended, at its end time', async () => {
    const clock = new FakeClock(0);
    const attempts: number[] = [];
    const done = retryThreeTimes(clock, attempts);
    clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve)); // let every pending microtask run
    expect(attempts).toEqual([1_000]);
    // So the second sleep was scheduled relative to t=1000, not t=100.
    expect(clock.nextTimerAt()).toBe(1_100);
    await clock.advanceAsync(200);
    await done;
    expect(attempts).toEqual([1_000, 1_100, 1_200]);
  });

  it('advanceAsync() lets async work started by a timer schedule the next one in time', async () => {
    const clock = new FakeClock(0);
    const attempts: number[] = [];
    const done = retryThreeTimes(clock, attempts);
    await clock.advanceAsync(1_000);
    await done;
    expect(attempts).toEqual([100, 200, 300]);
    expect(clock.nowMs()).toBe(1_000);
  });

  it('runAll drains timers, and refuses to spin forever on an interval', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.nowMs()), 5_000);
    clock.setTimeout(() => fired.push(clock.nowMs()), 60_000);
    clock.runAll();
    expect(fired).toEqual([5_000, 60_000]);
    clock.setInterval(() => undefined, 1);
    expect(() => clock.runAll(50)).toThrow(/after 50 firings/);
  });

  it('rejects nonsense', () => {
    const clock = new FakeClock(0);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
    expect(() => clock.set('not a date')).toThrow(RangeError);
    expect(() => new FakeClock('nope')).toThrow(RangeError);
  });

  it('is a Clock, like systemClock', () => {
    const clocks: Clock[] = [new FakeClock(), systemClock];
    for (const clock of clocks) expect(clock.now()).toBeInstanceOf(Date);
  });
});
