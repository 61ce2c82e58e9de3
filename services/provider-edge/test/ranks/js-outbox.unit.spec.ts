import type { Envelope } from '@gpunet/contracts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JetStreamOutbox } from '../../src/infra/js-outbox';

const envelope = (id: string): Envelope =>
  ({ eventId: id, type: 'edge.rank-status', version: 1 }) as unknown as Envelope;

describe('JetStreamOutbox: rank statuses are delivered in order, retried, never lost', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('retries with backoff until acknowledged; a newer running status replaces a waiting one, an exit is never replaced', async () => {
    let up = false;
    const sent: string[] = [];
    const acked: string[] = [];
    const outbox = new JetStreamOutbox({
      publish: (_subject, _payload, msgId) => {
        if (!up) return Promise.reject(new Error('timeout'));
        sent.push(msgId);
        return Promise.resolve();
      },
      log: () => undefined,
      random: () => 0.5,
    });
    outbox.push({ subject: 's', envelope: envelope('running-1'), supersedeKey: 'job/1/0' });
    await vi.advanceTimersByTimeAsync(0);
    outbox.push({ subject: 's', envelope: envelope('running-2'), supersedeKey: 'job/1/0' });
    outbox.push({ subject: 's', envelope: envelope('running-3'), supersedeKey: 'job/1/0' });
    outbox.push({
      subject: 's',
      envelope: envelope('exited'),
      supersedeKey: null,
      onAck: () => acked.push('exited'),
    });
    outbox.push({ subject: 's', envelope: envelope('running-other'), supersedeKey: 'job/1/1' });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toEqual([]);
    expect(outbox.size).toBe(4); // running-1 (in flight), running-3, exited, running-other
    up = true;
    outbox.retryNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['running-1', 'running-3', 'exited', 'running-other']);
    expect(acked).toEqual(['exited']);
    expect(outbox.size).toBe(0);
  });
});
