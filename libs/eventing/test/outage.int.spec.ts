import { buildEnvelope } from '@gpunet/contracts';
import { type NatsServerProcess, startNatsServer } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectNats,
  Database,
  DurableConsumer,
  ensureStreams,
  type NatsHandle,
  OutboxRelay,
  PostgresEventStore,
} from '../src';
import { CounterIncremented, CounterStream, counterRegistry } from './fixtures/counter';
import { applyAudit, auditSummary, createAuditProjection } from './fixtures/projection';
import { DATABASE_URL, dropSchema, uniqueName, waitUntil } from './support';

const producerSchema = uniqueName('outage_p');
const projectorSchema = uniqueName('outage_c');
const producer = new Database({ url: DATABASE_URL, schema: producerSchema });
const projector = new Database({ url: DATABASE_URL, schema: projectorSchema });
const store = new PostgresEventStore(producer, counterRegistry);
let server: NatsServerProcess;
let nats: NatsHandle;

beforeAll(async () => {
  server = await startNatsServer({ jetstream: true });
  await producer.open();
  await projector.open();
  await createAuditProjection(projector);
  nats = await connectNats({ servers: server.url, name: 'outage-test', reconnectTimeWaitMs: 50 });
  await ensureStreams(nats.jsm, [CounterStream]);
});

afterAll(async () => {
  await nats.close();
  await server.dispose();
  await producer.close();
  await projector.close();
  await dropSchema(producerSchema);
  await dropSchema(projectorSchema);
});

describe('NATS outage', () => {
  it('NATS stopped and restarted while events are appended: nothing is lost, nothing is applied twice', async () => {
    const relay = new OutboxRelay({
      db: producer,
      js: nats.js,
      channel: store.channel,
      publishTimeoutMs: 500,
      backoff: { initialMs: 20, maxMs: 200 },
    });
    const consumer = new DurableConsumer({
      name: 'outage-audit',
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      handle: (envelope, { tx }) => applyAudit(envelope, tx),
      db: projector,
      ...nats,
      backoff: { initialMs: 20, maxMs: 200 },
    });
    relay.start();
    await consumer.start();
    const append = async (from: number, to: number) => {
      for (let v = from; v <= to; v++) {
        const env = buildEnvelope(
          CounterIncremented,
          { counterId: 'o', by: 1, total: v },
          { streamId: 'counter-o' },
        );
        await store.append('counter-o', [env], { expectedVersion: v === 1 ? 'no_stream' : v - 1 });
      }
    };
    try {
      await append(1, 100);
      await waitUntil(
        async () => (await auditSummary(projector)).events === 100,
        'the first 100 events projected',
      );

      await server.stop();
      await append(101, 200); // appended while NATS is down: they wait in the outbox
      const waiting = await producer.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${producerSchema}".outbox`,
      );
      expect(Number(waiting[0]?.n)).toBeGreaterThan(0);

      await server.start();
      await append(201, 300);
      const summary = await waitUntil(
        async () => {
          const s = await auditSummary(projector);
          return s.events === 300 ? s : undefined;
        },
        'all 300 events projected after the restart',
        60_000,
      );
      expect(summary).toEqual({ events: 300, maxApplied: 1, streams: 1, violations: 0 });
      const info = await nats.jsm.streams.info(CounterStream.name);
      expect(info.state.messages).toBe(300);
    } finally {
      await consumer.stop();
      await relay.stop();
    }
  });
});
