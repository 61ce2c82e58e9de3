import { createRegistry } from '@gpunet/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandHandler, ConcurrencyError, Database, type NewEvent, PostgresEventStore } from '../src';
import { counterDecider, CounterIncremented, CounterLimitReached, counterRegistry } from './fixtures/counter';
import { DATABASE_URL, dropSchema, uniqueName } from './support';

const schema = uniqueName('store');
const db = new Database({ url: DATABASE_URL, schema, poolSize: 8 });
const store = new PostgresEventStore(db, counterRegistry);
let ids = 0;
const event = (total: number): NewEvent => ({
  eventId: `0192d3a4-5b6c-7d8e-9f00-${String(++ids).padStart(12, '0')}`,
  type: CounterIncremented.type,
  version: 1,
  data: { counterId: 'c', by: 1, total },
  occurredAt: '2026-11-29T12:00:00.000Z',
  correlationId: 'corr',
  causationId: null,
});

beforeAll(async () => {
  await db.open();
});
afterAll(async () => {
  await db.close();
  await dropSchema(schema);
});

describe('PostgresEventStore', () => {
  it('appends and reads a stream in order, with outbox rows in the same transaction', async () => {
    const result = await store.append('counter-a', [event(1), event(2)], { expectedVersion: 'no_stream' });
    expect(result.nextExpectedVersion).toBe(2);
    const read = await store.readStream('counter-a');
    expect(read.map((e) => [e.streamVersion, (e.data as { total: number }).total])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    const outbox = await db.query<{ subject: string }>(`SELECT subject FROM "${schema}".outbox ORDER BY id`);
    expect(outbox.map((r) => r.subject)).toEqual([
      CounterIncremented.subject(),
      CounterIncremented.subject(),
    ]);
  });

  it('refuses a wrong expected version without writing anything', async () => {
    await expect(store.append('counter-a', [event(9)], { expectedVersion: 5 })).rejects.toBeInstanceOf(
      ConcurrencyError,
    );
    await expect(
      store.append('counter-a', [event(9)], { expectedVersion: 'no_stream' }),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await store.currentVersion('counter-a')).toBe(2);
  });

  it('never stores an invalid payload', async () => {
    const bad = { ...event(1), data: { counterId: 'c', by: 0, total: 1 } };
    await expect(store.append('counter-bad', [bad], { expectedVersion: 'any' })).rejects.toThrow(/data\.by/);
    expect(await store.currentVersion('counter-bad')).toBe(0);
  });

  it('reads all streams in global order', async () => {
    const all = await store.readAll({ limit: 1000 });
    const positions = all.map((e) => e.globalPosition);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(all.map((e) => e.streamId))).toEqual(new Set(['counter-a']));
  });
});

describe('CommandHandler', () => {
  const handler = new CommandHandler({
    db,
    store,
    registry: counterRegistry,
    decider: counterDecider,
    clock: { now: () => new Date('2026-11-29T12:00:00Z') },
  });

  it('loads, decides and appends; business refusals are events', async () => {
    await handler.handle('counter-h', { counterId: 'h', by: 2, limit: 3 }, { correlationId: 'x' });
    const second = await handler.handle(
      'counter-h',
      { counterId: 'h', by: 2, limit: 3 },
      { correlationId: 'x' },
    );
    expect(second.domainEvents.map((e) => e.type)).toEqual([CounterLimitReached.type]);
    expect(second.nextExpectedVersion).toBe(2);
  });

  it('re-decides after a concurrency conflict, so 20 concurrent increments all land exactly once', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        new CommandHandler({
          db,
          store,
          registry: counterRegistry,
          decider: counterDecider,
          clock: { now: () => new Date() },
          maxRetries: 50,
        }).handle('counter-concurrent', { counterId: 'cc', by: 1, limit: 1000 }, { correlationId: 'y' }),
      ),
    );
    expect(results).toHaveLength(20);
    const events = await store.readStream('counter-concurrent');
    expect(events.map((e) => (e.data as { total: number }).total)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });

  it('an unknown event type from a decider is refused before anything is written', async () => {
    const registry = createRegistry([CounterIncremented]);
    const limited = new CommandHandler({
      db,
      store: new PostgresEventStore(db, registry),
      registry,
      decider: counterDecider,
      clock: { now: () => new Date() },
    });
    await expect(
      limited.handle('counter-u', { counterId: 'u', by: 5, limit: 1 }, { correlationId: 'z' }),
    ).rejects.toThrow(/unknown message type/);
    expect(await store.currentVersion('counter-u')).toBe(0);
  });
});

describe('group commit', () => {
  it('concurrent appends to one stream at one version in the same batch: one wins, the others conflict, other streams unaffected', async () => {
    const results = await Promise.allSettled([
      ...Array.from({ length: 5 }, () =>
        store.append('counter-g', [event(1)], { expectedVersion: 'no_stream' }),
      ),
      ...Array.from({ length: 5 }, (_, i) =>
        store.append(`counter-g${i}`, [event(1)], { expectedVersion: 'no_stream' }),
      ),
    ]);
    const same = results.slice(0, 5);
    expect(same.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of same.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(r.reason).toBeInstanceOf(ConcurrencyError);
    }
    expect(results.slice(5).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(await store.currentVersion('counter-g')).toBe(1);
  });

  it('a multi-event append is all or nothing', async () => {
    await store.append('counter-m', [event(1)], { expectedVersion: 'no_stream' });
    await expect(
      store.append('counter-m', [event(2), event(3)], { expectedVersion: 0 }),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    await store.append('counter-m', [event(2), event(3)], { expectedVersion: 1 });
    expect((await store.readStream('counter-m')).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
  });

  it('an append blocked after planning (an event id already stored) is rejected whole, with the later appends of its stream in the call; no version gap, no outbox row', async () => {
    // One call in flight: what is submitted while it runs goes together in the next call.
    const serial = new PostgresEventStore(db, counterRegistry, '', { maxInFlight: 1 });
    const known = event(1);
    await serial.append('counter-k', [known], { expectedVersion: 'no_stream' });
    const blocked = [event(1), { ...known }];
    const onTop = event(3);
    const results = await Promise.allSettled([
      serial.append('counter-x0', [event(1)], { expectedVersion: 'no_stream' }),
      serial.append('counter-x', blocked, { expectedVersion: 'no_stream' }),
      serial.append('counter-x', [onTop], { expectedVersion: 'any' }),
      serial.append('counter-y', [event(1)], { expectedVersion: 'no_stream' }),
      // Blocked the same way on a stream that has events: it reports the version it met.
      serial.append('counter-k', [event(2), { ...known }], { expectedVersion: 1 }),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
      'rejected',
    ]);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    for (const r of rejected) expect(r.reason).toBeInstanceOf(ConcurrencyError);
    expect(rejected.map((r) => (r.reason as ConcurrencyError).actualVersion)).toEqual([0, 0, 1]);
    expect(await serial.currentVersion('counter-x')).toBe(0);
    expect(await serial.currentVersion('counter-k')).toBe(1);
    const outbox = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${schema}".outbox WHERE event_id = ANY($1::uuid[])`,
      [[blocked[0]!.eventId, onTop.eventId]],
    );
    expect(Number(outbox[0]!.n)).toBe(0);
    await serial.append('counter-x', [event(1)], { expectedVersion: 'no_stream' });
    expect((await serial.readStream('counter-x')).map((e) => e.streamVersion)).toEqual([1]);
  });
});
