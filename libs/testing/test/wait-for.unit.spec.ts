import { describe, expect, it } from 'vitest';
import { eventually, isWaitTimeout, waitFor, WaitTimeoutError } from '../src';

/** A probe that becomes true on its `n`-th call, and counts calls. */
const trueOnCall = (n: number) => {
  const probe = () => {
    probe.calls++;
    return probe.calls >= n ? { ready: probe.calls } : undefined;
  };
  probe.calls = 0;
  return probe;
};

describe('waitFor', () => {
  it('resolves with the first truthy value, at once when the condition already holds', async () => {
    const probe = trueOnCall(1);
    await expect(waitFor(probe)).resolves.toEqual({ ready: 1 });
    expect(probe.calls).toBe(1);
  });

  it('polls until the condition holds (sync and async probes)', async () => {
    const sync = trueOnCall(4);
    await expect(waitFor(sync, { intervalMs: 1 })).resolves.toEqual({ ready: 4 });
    const inner = trueOnCall(3);
    await expect(waitFor(async () => inner(), { intervalMs: 1 })).resolves.toEqual({ ready: 3 });
  });

  it('times out with what it waited for and what it saw last', async () => {
    const error = await waitFor(() => ({ rows: 2 }).rows === 3 || 0, {
      timeoutMs: 30,
      description: 'the table to hold 3 rows',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(isWaitTimeout(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'WAIT_TIMEOUT',
      description: 'the table to hold 3 rows',
      timeoutMs: 30,
    });
    expect((error as Error).message).toMatch(
      /timed out after 30 ms waiting for the table to hold 3 rows; last probe returned 0 \(\d+ attempts\)/,
    );
  });

  it('treats a throwing probe as not yet, and keeps the last error as the cause', async () => {
    let calls = 0;
    const flaky = () => {
      calls++;
      if (calls < 3) throw new Error('connection refused');
      return 'up';
    };
    await expect(waitFor(flaky, { intervalMs: 1 })).resolves.toBe('up');

    const error = (await waitFor(
      () => {
        throw new Error('still refused');
      },
      { timeoutMs: 20, description: 'the server' },
    ).catch((e: unknown) => e)) as WaitTimeoutError;
    expect(error.message).toContain('last probe threw Error: still refused');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('stops at once with the reason when its signal aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('the server process exited');
    const waiting = waitFor(() => false, { timeoutMs: 60_000, signal: controller.signal });
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});

describe('eventually', () => {
  it('retries the assertion until it passes and returns its result', async () => {
    let n = 0;
    const result = await eventually(
      () => {
        n++;
        expect(n).toBeGreaterThanOrEqual(3);
        return n;
      },
      { intervalMs: 1 },
    );
    expect(result).toBe(3);
  });

  it('rethrows the last assertion error, prefixed, so the diff survives', async () => {
    const error = (await eventually(() => expect({ status: 'pending' }).toEqual({ status: 'done' }), {
      timeoutMs: 20,
      description: 'the job to finish',
    }).catch((e: unknown) => e)) as Error & { expected?: unknown; actual?: unknown };
    expect(error.message).toMatch(
      /^eventually: timed out after 20 ms \(\d+ attempts\) waiting for the job to finish: /,
    );
    expect(error.expected).toEqual({ status: 'done' });
    expect(error.actual).toEqual({ status: 'pending' });
  });

  it('wraps a thrown non-Error in a WaitTimeoutError', async () => {
    const error = await eventually(
      () => {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test
        throw 'plain string';
      },
      { timeoutMs: 10 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toContain('"plain string"');
  });
});
