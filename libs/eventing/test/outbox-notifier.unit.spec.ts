import { describe, expect, it } from 'vitest';
import type { Database } from '../src/postgres/database';
import { type LocalRelay, OutboxNotifier, registerLocalRelay } from '../src/postgres/event-store';

/** A database whose NOTIFY statements the test counts and completes. */
const fakeDb = () => {
  const notifies: { channel: unknown; done: () => void }[] = [];
  const db = {
    query: (_sql: string, params: readonly unknown[]) =>
      new Promise<unknown[]>((resolve) => notifies.push({ channel: params[0], done: () => resolve([]) })),
  } as unknown as Database;
  return { db, notifies };
};

const relay = (isLeader: boolean): LocalRelay & { woken: number } => ({
  woken: 0,
  isLeader,
  onCommitted() {
    this.woken += 1;
  },
});

describe('OutboxNotifier', () => {
  it('with no relay in this process, sends one NOTIFY at a time and one more for the commits meanwhile', async () => {
    const { db, notifies } = fakeDb();
    const notifier = new OutboxNotifier(db, 'orders_outbox');
    notifier.kick();
    notifier.kick();
    notifier.kick();
    expect(notifies.map((n) => n.channel)).toEqual(['orders_outbox']);
    notifies[0]!.done();
    await new Promise((resolve) => setImmediate(resolve));
    expect(notifies).toHaveLength(2);
    notifies[1]!.done();
  });

  it('wakes the leading relay of this process in memory and sends no NOTIFY', () => {
    const { db, notifies } = fakeDb();
    const leader = relay(true);
    const other = relay(false);
    const unregister = [
      registerLocalRelay('billing_outbox', leader),
      registerLocalRelay('invoices_outbox', other),
    ];
    try {
      new OutboxNotifier(db, 'billing_outbox').kick();
      expect(leader.woken).toBe(1);
      expect(other.woken).toBe(0);
      expect(notifies).toEqual([]);
    } finally {
      for (const u of unregister) u();
    }
  });

  it('wakes a standby relay of this process and still notifies the leader elsewhere', () => {
    const { db, notifies } = fakeDb();
    const standby = relay(false);
    const unregister = registerLocalRelay('ledger_outbox', standby);
    try {
      new OutboxNotifier(db, 'ledger_outbox').kick();
      expect(standby.woken).toBe(1);
      expect(notifies.map((n) => n.channel)).toEqual(['ledger_outbox']);
      notifies[0]!.done();
    } finally {
      unregister();
    }
    // Unregistered: a commit no longer reaches it.
    new OutboxNotifier(db, 'ledger_outbox').kick();
    expect(standby.woken).toBe(1);
  });
});
