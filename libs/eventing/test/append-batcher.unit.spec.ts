import { describe, expect, it } from 'vitest';
import { Batcher } from '../src/batcher';
import { AppendBatcher, type AppendOutcome, type PreparedAppend } from '../src/postgres/append-batch';

const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

const append = (streamId: string): PreparedAppend => ({ streamId, expected: null, events: [], trace: null });

/** A fake database call whose completion the test controls. */
const controlledRun = () => {
  const calls: {
    appends: readonly PreparedAppend[];
    finish: (outcomes?: AppendOutcome[]) => void;
    fail: (e: Error) => void;
  }[] = [];
  const run = (appends: readonly PreparedAppend[]) =>
    new Promise<AppendOutcome[]>((resolve, reject) => {
      calls.push({
        appends,
        finish: (outcomes) =>
          resolve(outcomes ?? appends.map(() => ({ ok: true, current: 0, positions: [1], versions: [1] }))),
        fail: reject,
      });
    });
  return { calls, run };
};

describe('AppendBatcher (group commit)', () => {
  it('sends the first appends at once and groups those that arrive while calls are in flight', async () => {
    const { calls, run } = controlledRun();
    let commits = 0;
    const batcher = new AppendBatcher(run, () => commits++, { maxInFlight: 2, maxBatch: 3 });
    const results = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((s) => batcher.submit(append(s)));
    expect(calls.map((c) => c.appends.map((a) => a.streamId))).toEqual([['a'], ['b']]);
    calls[0]!.finish();
    await results[0];
    // The next call starts on the next macrotask, so that what the answered callers submit joins it.
    await nextMacrotask();
    expect(calls.map((c) => c.appends.map((a) => a.streamId))).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
    calls[1]!.finish();
    calls[2]!.finish();
    await Promise.all(results.slice(0, 5));
    await nextMacrotask();
    expect(calls[3]!.appends.map((a) => a.streamId)).toEqual(['f', 'g']);
    calls[3]!.finish();
    await Promise.all(results);
    expect(commits).toBe(4);
  });

  it('gives each append its own outcome, and a failed call rejects only its own appends', async () => {
    const { calls, run } = controlledRun();
    const batcher = new AppendBatcher(run, () => undefined, { maxInFlight: 1 });
    const first = batcher.submit(append('a'));
    const grouped = [batcher.submit(append('b')), batcher.submit(append('c'))];
    calls[0]!.fail(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await nextMacrotask();
    calls[1]!.finish([
      { ok: false, current: 7 },
      { ok: true, current: 0, positions: [9], versions: [1] },
    ]);
    await expect(grouped[0]).resolves.toEqual({ ok: false, current: 7 });
    await expect(grouped[1]).resolves.toMatchObject({ ok: true, positions: [9] });
  });
});

describe('Batcher (coalesced calls)', () => {
  it('lets callers answered by a call join the next one: a closed loop of writers is not split in two', async () => {
    const calls: (readonly number[])[] = [];
    const gates: (() => void)[] = [];
    const batcher = new Batcher<number, number>(
      async (inputs) => {
        calls.push(inputs);
        await new Promise<void>((resolve) => gates.push(resolve));
        return inputs;
      },
      { maxInFlight: 1 },
    );
    // Four writers, each submitting its next input as soon as its previous one is answered.
    let next = 0;
    const writers = Array.from({ length: 4 }, async () => {
      while (next < 12) await batcher.submit(next++);
    });
    expect(calls).toEqual([[0]]);
    for (let i = 0; gates[i]; i++) {
      gates[i]!();
      // The answered writers submit again, then the next call starts (each on a macrotask).
      await nextMacrotask();
      await nextMacrotask();
    }
    await Promise.all(writers);
    // Started in the answering callback, the next call would leave out the writers just answered:
    // calls of 1, 3, 1, 3, … inputs. Deferred, every call carries every writer.
    expect(calls.map((c) => c.length)).toEqual([1, 4, 4, 3]);
  });

  it('answers each input with its own output, and refuses a call that answers for too few', async () => {
    const calls: (readonly number[])[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const batcher = new Batcher<number, string>(
      async (inputs) => {
        calls.push(inputs);
        await gate;
        return inputs.length === 3 ? inputs.slice(1).map(String) : inputs.map((i) => `#${i}`);
      },
      { maxInFlight: 1 },
    );
    const first = batcher.submit(1);
    const rest = [2, 3, 4].map((i) => batcher.submit(i));
    expect(calls).toEqual([[1]]);
    release();
    await expect(first).resolves.toBe('#1');
    await expect(Promise.all(rest)).rejects.toThrow('answered 2 of 3 inputs');
    expect(calls).toEqual([[1], [2, 3, 4]]);
  });
});
