import { buildEnvelope, DeadLettersStream, namespacedStream, type Envelope } from '@gpunet/contracts';
import {
  usePostgres,
  type PostgresTestSchema,
  useNats,
  type NatsTestContext,
  waitFor,
} from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats, Database, DurableConsumer, ensureStreams, type NatsHandle } from '../src';
import { CounterIncremented, CounterStream, counterRegistry } from './fixtures/counter';

let pgSchema: PostgresTestSchema;
let natsContext: NatsTestContext;
let db: Database;
let nats: NatsHandle;

beforeAll(async () => {
  pgSchema = await usePostgres({ label: 'batch' });
  natsContext = await useNats({ label: 'batch' });
  db = await new Database({ url: pgSchema.connectionString, schema: pgSchema.schema }).open();
  nats = await connectNats({ servers: natsContext.servers, name: 'batch-test' });
  await ensureStreams(nats.jsm, [CounterStream, DeadLettersStream], natsContext.prefix);
});
afterAll(async () => {
  await nats.close();
  await natsContext.cleanup();
  await db.close();
  await pgSchema.drop();
});

/** A consumer of the counter stream that dead-letters after two attempts, retrying quickly. */
const retrying = (name: string) => ({
  name,
  stream: CounterStream,
  messages: [CounterIncremented],
  registry: counterRegistry,
  db,
  ...nats,
  prefix: natsContext.prefix,
  maxAttempts: 2,
  backoff: { initialMs: 5, maxMs: 10 },
});

describe('DurableConsumer with handleBatch', () => {
  it('applies batches in stream order, and isolates a failing message by falling back to one at a time', async () => {
    const calls: string[][] = [];
    const applied: string[] = [];
    const consumer = new DurableConsumer({
      ...retrying('batch-consumer'),
      handleBatch: async (envelopes: readonly Envelope[]) => {
        const ids = envelopes.map((e) => (e.data as { counterId: string }).counterId);
        calls.push(ids);
        if (ids.includes('poison')) throw new Error('poison in the batch');
        applied.push(...ids);
      },
    });
    const subject = CounterIncremented.subject(undefined, natsContext.prefix);
    for (let i = 0; i < 30; i++) {
      const id = i === 15 ? 'poison' : `c${i}`;
      const env = buildEnvelope(CounterIncremented, { counterId: id, by: 1, total: 1 }, { streamId: id });
      await nats.js.publish(subject, JSON.stringify({ ...env, streamVersion: 1 }));
    }
    await consumer.start();
    try {
      await waitFor(() => applied.length === 29, { description: '29 good messages applied' });
      const dlq = namespacedStream(DeadLettersStream, natsContext.prefix).name;
      await waitFor(async () => (await nats.jsm.streams.info(dlq)).state.messages === 1, {
        description: 'the poison dead-lettered',
      });
    } finally {
      await consumer.stop();
    }
    expect(applied).toEqual(Array.from({ length: 30 }, (_, i) => `c${i}`).filter((id) => id !== 'c15'));
    expect(calls.some((ids) => ids.length > 1)).toBe(true); // batches really were batches
    expect(calls.filter((ids) => ids.length === 1 && ids[0] === 'poison').length).toBe(2); // alone, maxAttempts times
  });

  it('a handler that writes without waiting (Tx.write): a failing write is isolated and dead-lettered like a throw', async () => {
    await db.execute(
      `CREATE TABLE "${db.schema}".written (counter_id text PRIMARY KEY, total int NOT NULL CHECK (total >= 0))`,
    );
    const consumer = new DurableConsumer({
      ...retrying('writing-consumer'),
      // Returns before its statement ran: the batch's writes go out pipelined. (The stream also
      // holds the other tests' messages; this test's are w0 … w29.)
      handle: (envelope, { tx }) => {
        const { counterId, total } = envelope.data as { counterId: string; total: number };
        if (!counterId.startsWith('w')) return Promise.resolve();
        tx.write(`INSERT INTO "${tx.schema}".written VALUES ($1, $2)`, [counterId, total], 'written_insert');
        return Promise.resolve();
      },
    });
    const dlq = namespacedStream(DeadLettersStream, natsContext.prefix).name;
    const lettersBefore = (await nats.jsm.streams.info(dlq)).state.messages;
    const subject = CounterIncremented.subject(undefined, natsContext.prefix);
    for (let i = 0; i < 30; i++) {
      const id = `w${i}`;
      // w12's total breaks the table's CHECK: its write fails inside the batch's transaction.
      const env = buildEnvelope(
        CounterIncremented,
        { counterId: id, by: 1, total: i === 12 ? -1 : i },
        { streamId: id },
      );
      await nats.js.publish(subject, JSON.stringify({ ...env, streamVersion: 1 }));
    }
    await consumer.start();
    const written = async () =>
      (
        await db.read<{ counter_id: string }>(`SELECT counter_id FROM "${db.schema}".written ORDER BY total`)
      ).map((r) => r.counter_id);
    try {
      await waitFor(async () => (await written()).length === 29, { description: '29 good writes committed' });
      await waitFor(async () => (await nats.jsm.streams.info(dlq)).state.messages === lettersBefore + 1, {
        description: 'w12 dead-lettered',
      });
    } finally {
      await consumer.stop();
    }
    // Each good write exactly once (a second would break the primary key), w12's never.
    expect(await written()).toEqual(
      Array.from({ length: 30 }, (_, i) => `w${i}`).filter((id) => id !== 'w12'),
    );
  });

  it('refuses to be built without exactly one handler', () => {
    const base = {
      name: 'x',
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      db,
      ...nats,
    };
    expect(() => new DurableConsumer(base)).toThrow(/exactly one/);
    expect(
      () =>
        new DurableConsumer({ ...base, handle: async () => undefined, handleBatch: async () => undefined }),
    ).toThrow(/exactly one/);
  });

  it('a database outage outlasting maxAttempts never dead-letters: the message is applied when it ends', async () => {
    let failuresLeft = 5; // more than maxAttempts (2)
    const applied: string[] = [];
    const consumer = new DurableConsumer({
      ...retrying('outage-consumer'),
      handle: async (envelope) => {
        const id = (envelope.data as { counterId: string }).counterId;
        if (id !== 'during-outage') return;
        if (failuresLeft-- > 0)
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
        applied.push(id);
      },
    });
    const dlq = namespacedStream(DeadLettersStream, natsContext.prefix).name;
    const lettersBefore = (await nats.jsm.streams.info(dlq)).state.messages;
    const env = buildEnvelope(
      CounterIncremented,
      { counterId: 'during-outage', by: 1, total: 1 },
      { streamId: 'during-outage' },
    );
    await nats.js.publish(
      CounterIncremented.subject(undefined, natsContext.prefix),
      JSON.stringify({ ...env, streamVersion: 1 }),
    );
    await consumer.start();
    try {
      await waitFor(() => applied.length === 1, { description: 'the message applied after the outage' });
    } finally {
      await consumer.stop();
    }
    expect((await nats.jsm.streams.info(dlq)).state.messages).toBe(lettersBefore);
  });
});
