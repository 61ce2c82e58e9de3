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

describe('DurableConsumer with handleBatch', () => {
  it('applies batches in stream order, and isolates a failing message by falling back to one at a time', async () => {
    const calls: string[][] = [];
    const applied: string[] = [];
    const consumer = new DurableConsumer({
      name: 'batch-consumer',
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      db,
      ...nats,
      prefix: natsContext.prefix,
      maxAttempts: 2,
      backoff: { initialMs: 5, maxMs: 10 },
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
      name: 'outage-consumer',
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      db,
      ...nats,
      prefix: natsContext.prefix,
      maxAttempts: 2,
      backoff: { initialMs: 5, maxMs: 10 },
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
