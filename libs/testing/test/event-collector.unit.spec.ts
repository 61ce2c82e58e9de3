import { describe, expect, it } from 'vitest';
import { EventCollector, WaitTimeoutError } from '../src';

interface Placed {
  readonly jobId: string;
  readonly gpus: number;
}

describe('EventCollector', () => {
  it('resolves with an item that already arrived', async () => {
    const seen = new EventCollector<Placed>('job.placed');
    seen.push({ jobId: 'a', gpus: 1 });
    await expect(seen.waitFor((e) => e.jobId === 'a')).resolves.toEqual({ jobId: 'a', gpus: 1 });
  });

  it('resolves when the awaited item is pushed later, without polling', async () => {
    const seen = new EventCollector<Placed>('job.placed');
    const waiting = seen.waitFor((e) => e.jobId === 'b');
    let settled = false;
    void waiting.then(() => (settled = true));
    seen.push({ jobId: 'a', gpus: 1 });
    await Promise.resolve();
    expect(settled).toBe(false);
    seen.push({ jobId: 'b', gpus: 2 });
    await expect(waiting).resolves.toEqual({ jobId: 'b', gpus: 2 });
  });

  it('settles several waiters from one push, and push works unbound', async () => {
    const seen = new EventCollector<number>();
    const { push } = seen;
    const first = seen.waitFor((n) => n > 10);
    const count = seen.waitForCount(2);
    const evens = seen.waitForMatching((n) => n % 2 === 0, 2);
    push(4);
    push(12);
    await expect(first).resolves.toBe(12);
    await expect(count).resolves.toEqual([4, 12]);
    await expect(evens).resolves.toEqual([4, 12]);
    expect(seen.length).toBe(2);
    expect(seen.items).toEqual([4, 12]);
  });

  it('resolves with an undefined item when that is what matched', async () => {
    const seen = new EventCollector<string | undefined>();
    seen.push(undefined);
    await expect(seen.waitFor((x) => x === undefined, { timeoutMs: 10 })).resolves.toBeUndefined();
  });

  it('times out naming what it waited for and listing what it saw', async () => {
    const seen = new EventCollector<Placed>('job.placed');
    seen.push({ jobId: 'a', gpus: 1 });
    const error = (await seen
      .waitFor((e) => e.gpus === 8, { timeoutMs: 10, description: 'an 8-GPU placement' })
      .catch((e: unknown) => e)) as WaitTimeoutError;
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error.message).toBe(
      'timed out after 10 ms waiting for an 8-GPU placement in job.placed; saw 1 item: [{"jobId":"a","gpus":1}]',
    );
    // A waiter that timed out is gone: a late push must not resolve anything or throw.
    seen.push({ jobId: 'z', gpus: 8 });
  });

  it('names counts and empty collections in timeouts', async () => {
    const seen = new EventCollector<number>('heartbeats');
    await expect(seen.waitForCount(3, { timeoutMs: 5 })).rejects.toThrow(
      'timed out after 5 ms waiting for 3 heartbeats in heartbeats; saw 0 items',
    );
  });

  it('clear() forgets collected items', async () => {
    const seen = new EventCollector<number>();
    seen.push(1);
    seen.clear();
    expect(seen.length).toBe(0);
    const later = seen.waitForCount(1);
    seen.push(2);
    await expect(later).resolves.toEqual([2]);
  });
});
