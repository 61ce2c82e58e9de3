import { describe, expect, it } from 'vitest';
import { ReplyBufferPool } from '../src/app/reply-buffer.pool';

/** A pool whose replies are handed over and sent when the test says so. */
const pool = (keep?: number) => {
  const handedOver: (() => void)[] = [];
  const flushes: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const buffers = new ReplyBufferPool({
    bytes: 1024,
    keep,
    afterReply: (then) => handedOver.push(then),
    sent: () => new Promise<void>((resolve, reject) => flushes.push({ resolve, reject })),
  });
  /** The replies so far handed to the connection and (or not) sent. */
  const settle = async (outcome: 'sent' | 'failed') => {
    for (const then of handedOver.splice(0)) then();
    for (const f of flushes.splice(0)) {
      if (outcome === 'sent') f.resolve();
      else f.reject(new Error('connection closed'));
    }
    await new Promise((r) => setImmediate(r));
  };
  return { buffers, settle };
};

describe('ReplyBufferPool', () => {
  it('lends a buffer again only once the reply written in it has been sent', async () => {
    const { buffers, settle } = pool();
    const first = buffers.lend(700);
    expect(first).toHaveLength(1024);
    const second = buffers.lend(700);
    expect(second).not.toBe(first); // the first reply is still on its way
    await settle('sent');
    expect(buffers.idle).toBe(2);
    const again = [buffers.lend(10), buffers.lend(10)];
    expect(again).toContain(first);
    expect(again).toContain(second);
    expect(buffers.idle).toBe(0);
  });

  it('gives a reply larger than its buffers one of its own, never pooled', async () => {
    const { buffers, settle } = pool();
    const large = buffers.lend(5000);
    expect(large).toHaveLength(5000);
    await settle('sent');
    expect(buffers.idle).toBe(0);
  });

  it('does not reuse a buffer whose reply may not have left (the flush failed)', async () => {
    const { buffers, settle } = pool();
    const lent = buffers.lend(100);
    await settle('failed');
    expect(buffers.idle).toBe(0);
    expect(buffers.lend(100)).not.toBe(lent);
  });

  it('keeps at most `keep` idle buffers', async () => {
    const { buffers, settle } = pool(2);
    for (let i = 0; i < 5; i++) buffers.lend(100);
    await settle('sent');
    expect(buffers.idle).toBe(2);
  });
});
