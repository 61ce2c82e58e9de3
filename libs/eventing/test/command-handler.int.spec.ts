import type { Decider } from '@gpunet/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandHandler, Database, PostgresEventStore, PRIVATE_EVENT_VERSION } from '../src';
import {
  type CounterEvent,
  counterDecider,
  CounterIncremented,
  counterRegistry,
  type Increment,
} from './fixtures/counter';
import { DATABASE_URL, dropSchema, uniqueName } from './support';

const schema = uniqueName('handler');
const db = new Database({ url: DATABASE_URL, schema, poolSize: 8 });
const store = new PostgresEventStore(db, counterRegistry);
const clock = { now: () => new Date('2026-12-03T10:00:00Z') };
let ids = 0;
const newId = () => `0193e000-0000-7000-8000-${String(++ids).padStart(12, '0')}`;

/** The counter, recording each refused increment as a private event (never published). */
type Tallied = CounterEvent | { type: 'counter.refusal-tallied'; data: { refused: number } };
const tallying: Decider<Increment, Tallied, { total: number; refused: number }> = {
  initialState: { total: 0, refused: 0 },
  decide: (command, state) => {
    const decided = counterDecider.decide(command, { total: state.total }) as Tallied[];
    return decided[0]?.type === 'counter.limit-reached'
      ? [...decided, { type: 'counter.refusal-tallied', data: { refused: state.refused + 1 } }]
      : decided;
  },
  evolve: (state, event) => {
    if (event.type === 'counter.refusal-tallied') return { ...state, refused: event.data.refused };
    return { ...state, ...counterDecider.evolve({ total: state.total }, event) };
  },
};

/** A counter handler on this suite's store, with `options` on top. */
const counterHandler = (
  options: Partial<
    ConstructorParameters<typeof CommandHandler<Increment, CounterEvent, { total: number }>>[0]
  > = {},
) => new CommandHandler({ db, store, registry: counterRegistry, decider: counterDecider, clock, ...options });

const outboxCount = async (): Promise<number> => {
  const [row] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".outbox`);
  return Number(row?.n);
};

beforeAll(async () => {
  await db.open();
});
afterAll(async () => {
  await db.close();
  await dropSchema(schema);
});

describe('CommandHandler: causation', () => {
  const handler = new CommandHandler({
    db,
    store,
    registry: counterRegistry,
    decider: counterDecider,
    clock,
    newId,
  });

  it('stamps the caller’s correlation and causation, the clock’s time and fresh ids', async () => {
    await handler.handle(
      'counter-c1',
      { counterId: 'c1', by: 1, limit: 9 },
      { correlationId: 'req-1', causationId: 'evt-0' },
    );
    const [event] = await store.readStream('counter-c1');
    expect(event).toMatchObject({
      correlationId: 'req-1',
      causationId: 'evt-0',
      occurredAt: '2026-12-03T10:00:00.000Z',
    });
  });

  it('keeps the stream’s correlation when the caller names none, caused by the event it decided on', async () => {
    await handler.handle('counter-c1', { counterId: 'c1', by: 1, limit: 9 });
    const events = await store.readStream('counter-c1');
    expect(events[1]).toMatchObject({ correlationId: 'req-1', causationId: events[0]!.eventId });
  });

  it('starts a new stream’s correlation at the command when nobody names one: never null', async () => {
    const handled = await handler.handle('counter-c2', { counterId: 'c2', by: 1, limit: 9 });
    const [event] = await store.readStream('counter-c2');
    expect(event).toMatchObject({ correlationId: handled.commandId, causationId: handled.commandId });
  });
});

describe('CommandHandler: building the command from the state', () => {
  const handler = new CommandHandler({
    db,
    store,
    registry: counterRegistry,
    decider: counterDecider,
    clock,
  });

  it('builds the command from the loaded state, and decides nothing when it builds null', async () => {
    const seen: number[] = [];
    const build = (state: { total: number }) => {
      seen.push(state.total);
      return state.total >= 2 ? null : { counterId: 'b', by: 1, limit: 9 };
    };
    for (let i = 0; i < 4; i++) await handler.handle('counter-b', build);
    expect(seen).toEqual([0, 1, 2, 2]);
    expect(await store.currentVersion('counter-b')).toBe(2);
  });
});

describe('CommandHandler: private events', () => {
  const handler = new CommandHandler({
    db,
    store,
    registry: counterRegistry,
    decider: tallying,
    clock,
    publishes: (e) => e.type !== 'counter.refusal-tallied',
  });

  it('stores private events in the stream, in order, without an outbox row, and folds them back', async () => {
    await handler.handle('counter-p', { counterId: 'p', by: 2, limit: 2 });
    const before = await outboxCount();
    const refused = await handler.handle('counter-p', { counterId: 'p', by: 1, limit: 2 });
    expect(refused.domainEvents.map((e) => e.type)).toEqual([
      'counter.limit-reached',
      'counter.refusal-tallied',
    ]);
    expect(await outboxCount()).toBe(before + 1);
    const events = await store.readStream('counter-p');
    expect(events.map((e) => [e.streamVersion, e.type, e.version])).toEqual([
      [1, 'counter.incremented', 1],
      [2, 'counter.limit-reached', 1],
      [3, 'counter.refusal-tallied', PRIVATE_EVENT_VERSION],
    ]);
    expect((await handler.load('counter-p')).state).toEqual({ total: 2, refused: 1 });
  });

  it('refuses to append a wire type as a private event', async () => {
    const leaky = counterHandler({ publishes: () => false });
    await expect(leaky.handle('counter-leak', { counterId: 'l', by: 1, limit: 9 })).rejects.toThrow(
      /wire message/,
    );
    expect(await store.currentVersion('counter-leak')).toBe(0);
  });
});

describe('CommandHandler: effects in the decision’s transaction', () => {
  it('commits effects with the events, and a failing effect keeps neither', async () => {
    await db.query(
      `CREATE TABLE "${schema}".totals (counter_id text PRIMARY KEY, total int NOT NULL CHECK (total <= 5))`,
    );
    const handler = counterHandler({
      effects: async ({ tx, after }) => {
        await tx.query(
          `INSERT INTO "${tx.schema}".totals VALUES ('e', $1) ON CONFLICT (counter_id) DO UPDATE SET total = EXCLUDED.total`,
          [after.total],
        );
      },
    });
    await handler.handle('counter-e', { counterId: 'e', by: 5, limit: 99 });
    await expect(handler.handle('counter-e', { counterId: 'e', by: 1, limit: 99 })).rejects.toThrow(
      /totals_total_check/,
    );
    expect(await store.currentVersion('counter-e')).toBe(1);
    expect(await db.query(`SELECT total FROM "${schema}".totals`)).toEqual([{ total: 5 }]);
  });
});

describe('CommandHandler: serial decisions', () => {
  it('queues concurrent decisions on one stream behind its lock: no conflicts, none lost', async () => {
    const handler = counterHandler({ concurrency: 'serial', maxRetries: 0 });
    await Promise.all(
      Array.from({ length: 12 }, () => handler.handle('counter-s', { counterId: 's', by: 1, limit: 99 })),
    );
    const totals = (await store.readStream('counter-s')).map((e) => (e.data as { total: number }).total);
    expect(totals).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });
});

describe('CommandHandler: snapshots', () => {
  const snapshotting = (format: number) => counterHandler({ snapshots: { format } });

  it('writes the state after each decision and reads it with only the events after it', async () => {
    const handler = snapshotting(1);
    await handler.handle('counter-n', { counterId: 'n', by: 1, limit: 99 }, { correlationId: 'snap' });
    await handler.handle('counter-n', { counterId: 'n', by: 2, limit: 99 });
    const [row] = await db.query<{
      version: number;
      state: unknown;
      correlation_id: string;
      last_event_id: string;
    }>(
      `SELECT version, state, correlation_id, last_event_id FROM "${schema}".snapshots WHERE stream_id = 'counter-n'`,
    );
    const second = (await store.readStream('counter-n'))[1]!;
    expect(row).toEqual({
      version: 2,
      state: { total: 3 },
      correlation_id: 'snap',
      last_event_id: second.eventId,
    });
    // An event appended by another writer after the snapshot is folded on top of it.
    await store.append(
      'counter-n',
      [
        {
          eventId: newId(),
          type: CounterIncremented.type,
          version: 1,
          data: { counterId: 'n', by: 4, total: 7 },
          occurredAt: clock.now().toISOString(),
          correlationId: 'snap',
          causationId: 'elsewhere',
        },
      ],
      { expectedVersion: 2 },
    );
    expect(await handler.load('counter-n')).toEqual({ state: { total: 7 }, version: 3 });
    const next = await handler.handle('counter-n', { counterId: 'n', by: 1, limit: 99 });
    expect(next.state).toEqual({ total: 8 });
    const [, , third, fourth] = await store.readStream('counter-n');
    expect(fourth).toMatchObject({ correlationId: 'snap', causationId: third!.eventId });
  });

  it('a decision on a snapshot alone keeps the stream’s correlation and is caused by its last event', async () => {
    const handler = snapshotting(1);
    const events = await store.readStream('counter-n');
    const next = await handler.handle('counter-n', { counterId: 'n', by: 1, limit: 99 });
    expect(next.events[0]).toMatchObject({ correlationId: 'snap', causationId: events.at(-1)!.eventId });
  });

  it('ignores a snapshot of another format and folds the stream', async () => {
    // A snapshot whose shape the new code would misread: format 2 does not trust format 1's.
    await db.query(
      `UPDATE "${schema}".snapshots SET state = '{"total": -100}' WHERE stream_id = 'counter-n'`,
    );
    expect((await snapshotting(1).load('counter-n')).state).toEqual({ total: -100 });
    expect((await snapshotting(2).load('counter-n')).state).toEqual({ total: 9 });
  });
});
