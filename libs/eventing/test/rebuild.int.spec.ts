import { buildEnvelope } from '@gpunet/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectNats,
  Database,
  DurableConsumer,
  ensureStreams,
  type NatsHandle,
  OutboxRelay,
  type Projection,
  PostgresEventStore,
  rebuildFromEventStore,
  rebuildFromStream,
} from '../src';
import { CounterIncremented, CounterStream, counterRegistry } from './fixtures/counter';
import { DATABASE_URL, deleteStreams, dropSchema, NATS_URL, uniqueName, waitUntil } from './support';

const prefix = uniqueName('rebuild');
const producerSchema = uniqueName('rebuild_p');
const projectorSchema = uniqueName('rebuild_c');
const producer = new Database({ url: DATABASE_URL, schema: producerSchema });
const projector = new Database({ url: DATABASE_URL, schema: projectorSchema });
const store = new PostgresEventStore(producer, counterRegistry, prefix);
let nats: NatsHandle;

/** Totals per counter: the read model a rebuild must reproduce exactly. */
const totals = (db: Database): Projection => ({
  name: 'totals',
  reset: async (tx) => {
    await tx.query(`DELETE FROM "${tx.schema}".totals`);
  },
  apply: async (envelope, tx) => {
    const d = envelope.data as { counterId: string; total: number };
    await tx.query(
      `INSERT INTO "${tx.schema}".totals VALUES ($1, $2) ON CONFLICT (counter_id) DO UPDATE SET total = EXCLUDED.total`,
      [d.counterId, d.total],
    );
    void db;
  },
});

const snapshot = async (db: Database) =>
  db.query<{ counter_id: string; total: number }>(
    `SELECT counter_id, total FROM "${db.schema}".totals ORDER BY counter_id`,
  );

beforeAll(async () => {
  await producer.open();
  await projector.open();
  for (const db of [producer, projector]) {
    await db.query(`CREATE TABLE "${db.schema}".totals (counter_id text PRIMARY KEY, total int NOT NULL)`);
  }
  nats = await connectNats({ servers: NATS_URL, name: 'rebuild-test' });
  await ensureStreams(nats.jsm, [CounterStream], prefix);
  for (let c = 0; c < 5; c++) {
    for (let v = 1; v <= 20; v++) {
      const env = buildEnvelope(
        CounterIncremented,
        { counterId: `c${c}`, by: 1, total: v },
        { streamId: `counter-${c}` },
      );
      await store.append(`counter-${c}`, [env], { expectedVersion: v === 1 ? 'no_stream' : v - 1 });
    }
  }
  const relay = new OutboxRelay({ db: producer, js: nats.js, channel: store.channel });
  await relay.drain();
});

afterAll(async () => {
  await nats.close();
  await deleteStreams(NATS_URL, prefix);
  await producer.close();
  await projector.close();
  await dropSchema(producerSchema);
  await dropSchema(projectorSchema);
});

describe('projection rebuild by replay', () => {
  it('from the service’s own event store gives the same tables as live application', async () => {
    await producer.query(`INSERT INTO "${producerSchema}".totals VALUES ('c0', 999), ('stale', 1)`);
    const progress: number[] = [];
    const report = await rebuildFromEventStore(producer, store, totals(producer), {
      pageSize: 30,
      onProgress: (n) => progress.push(n),
    });
    expect(report).toEqual({ applied: 100, skipped: 0 });
    expect(progress).toEqual([30, 60, 90, 100]);
    expect(await snapshot(producer)).toEqual(
      Array.from({ length: 5 }, (_, c) => ({ counter_id: `c${c}`, total: 20 })),
    );
  });

  it('from JetStream: the rebuilt projection matches the live one and the resumed consumer applies nothing twice', async () => {
    const projection = totals(projector);
    const consumer = new DurableConsumer({
      name: projection.name,
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      handle: (envelope, { tx }) => projection.apply(envelope, tx),
      db: projector,
      ...nats,
      prefix,
    });
    await consumer.start();
    await waitUntil(
      async () =>
        (await snapshot(projector)).every((r) => r.total === 20) && (await snapshot(projector)).length === 5,
      'live projection',
    );
    const live = await snapshot(projector);
    await consumer.stop();

    await projector.query(`UPDATE "${projectorSchema}".totals SET total = -1`); // corrupt it
    const report = await rebuildFromStream({
      db: projector,
      ...nats,
      registry: counterRegistry,
      stream: CounterStream,
      messages: [CounterIncremented],
      projection,
      prefix,
    });
    expect(report).toEqual({ applied: 100, skipped: 0 });
    expect(await snapshot(projector)).toEqual(live);

    const handledAfter: string[] = [];
    const resumed = new DurableConsumer({
      name: projection.name,
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      handle: async (envelope, { tx }) => {
        handledAfter.push(envelope.eventId);
        await projection.apply(envelope, tx);
      },
      db: projector,
      ...nats,
      prefix,
    });
    await resumed.start();
    const env = buildEnvelope(
      CounterIncremented,
      { counterId: 'c0', by: 1, total: 21 },
      { streamId: 'counter-0' },
    );
    await store.append('counter-0', [env], { expectedVersion: 20 });
    await new OutboxRelay({ db: producer, js: nats.js, channel: store.channel }).drain();
    await waitUntil(async () => handledAfter.includes(env.eventId), 'the new event');
    await resumed.stop();
    expect(handledAfter).toEqual([env.eventId]);
    expect((await snapshot(projector))[0]).toEqual({ counter_id: 'c0', total: 21 });
  });
});
