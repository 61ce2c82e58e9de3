import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import {
  buildEnvelope,
  createRegistry,
  MessageDeadLettered,
  namespacedStream,
  DeadLettersStream,
} from '@gpunet/contracts';
import { headers } from '@nats-io/nats-core';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectNats,
  Database,
  DurableConsumer,
  ensureStreams,
  eventingMetrics,
  type NatsHandle,
  type NewEvent,
  OutboxRelay,
  PostgresEventStore,
} from '../src';
import { CounterIncremented, CounterStream, counterRegistry } from './fixtures/counter';
import { applyAudit, auditSummary, createAuditProjection } from './fixtures/projection';
import { DATABASE_URL, deleteStreams, dropSchema, NATS_URL, uniqueName, waitUntil } from './support';

const ROOT = resolve(import.meta.dirname, '../../..');

const prefix = uniqueName('pipe');
const producerSchema = uniqueName('producer');
const projectorSchema = uniqueName('projector');
const producer = new Database({ url: DATABASE_URL, schema: producerSchema });
const projector = new Database({ url: DATABASE_URL, schema: projectorSchema });
const store = new PostgresEventStore(producer, counterRegistry, prefix);
let nats: NatsHandle;

const incremented = (counter: string, total: number): NewEvent => {
  const env = buildEnvelope(CounterIncremented, { counterId: counter, by: 1, total }, { streamId: counter });
  return { ...env, causationId: null };
};

const startRelayProcess = (extraEnv: Record<string, string>): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'processes/relay.process.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL,
      SCHEMA: producerSchema,
      NATS_URL,
      PREFIX: prefix,
      BATCH_SIZE: '100',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });

const outboxSize = async (): Promise<number> =>
  Number((await producer.query<{ n: string }>(`SELECT count(*) AS n FROM "${producerSchema}".outbox`))[0]?.n);

const streamMessages = async (): Promise<number> =>
  (await nats.jsm.streams.info(namespacedStream(CounterStream, prefix).name)).state.messages;

beforeAll(async () => {
  await producer.open();
  await projector.open();
  await createAuditProjection(projector);
  nats = await connectNats({ servers: NATS_URL, name: 'pipeline-test' });
  await ensureStreams(nats.jsm, [CounterStream, DeadLettersStream], prefix);
});

afterAll(async () => {
  await nats.close();
  await deleteStreams(NATS_URL, prefix);
  await producer.close();
  await projector.close();
  await dropSchema(producerSchema);
  await dropSchema(projectorSchema);
});

describe('outbox relay → JetStream → durable consumer → projection', () => {
  it('a relay SIGKILLed mid-batch and restarted: every event reaches the projection exactly once, in order per stream', async () => {
    const streams = 40;
    const perStream = 25;
    await Promise.all(
      Array.from({ length: streams }, async (_, s) => {
        for (let v = 1; v <= perStream; v++) {
          await store.append(`counter-${s}`, [incremented(`counter-${s}`, v)], {
            expectedVersion: v - 1 === 0 ? 'no_stream' : v - 1,
          });
        }
      }),
    );
    expect(await outboxSize()).toBe(streams * perStream);

    // Dies after JetStream acknowledged the 3rd batch of 100 and before those rows were deleted.
    const doomed = startRelayProcess({ KILL_AFTER_BATCHES: '3' });
    const [, signal] = (await once(doomed, 'exit')) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGKILL');
    expect(await streamMessages()).toBe(300);
    // The 3rd batch's rows are still there (acknowledged, never deleted); the first two batches'
    // DELETEs run off the publishing path (gathered over `deleteDelayMs`), so under load one of them
    // may not have committed before the kill either: those rows go out again too, and are dropped
    // as duplicates like the 3rd batch's.
    const left = await outboxSize();
    expect(left).toBeGreaterThanOrEqual(streams * perStream - 200);
    expect(left).toBeLessThanOrEqual(streams * perStream);

    const relay = startRelayProcess({});
    try {
      await waitUntil(async () => (await outboxSize()) === 0, 'the restarted relay to empty the outbox');
    } finally {
      relay.kill('SIGTERM');
      await once(relay, 'exit');
    }
    // The re-sent batch was dropped by the broker's de-duplication on Nats-Msg-Id.
    expect(await streamMessages()).toBe(streams * perStream);

    const consumer = new DurableConsumer({
      name: 'audit',
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      handle: (envelope, { tx }) => applyAudit(envelope, tx),
      db: projector,
      ...nats,
      prefix,
    });
    await consumer.start();
    try {
      const summary = await waitUntil(async () => {
        const s = await auditSummary(projector);
        return s.events === streams * perStream ? s : undefined;
      }, 'all events in the projection');
      expect(summary).toEqual({ events: streams * perStream, maxApplied: 1, streams, violations: 0 });
      const [checkpoint] = await projector.query<{ stream_sequence: string }>(
        `SELECT stream_sequence FROM "${projectorSchema}".checkpoints WHERE consumer = 'audit'`,
      );
      expect(Number(checkpoint?.stream_sequence)).toBe(streams * perStream);
    } finally {
      await consumer.stop();
    }
  });

  it('poison messages are dead-lettered after N attempts with the reason, while the consumer keeps going', async () => {
    const metricsRegistry = new Registry();
    const metrics = eventingMetrics(metricsRegistry);
    // A Set: a handler may run again when its batch falls back to one-by-one; only its effects in
    // the transaction are exactly-once, and this handler has none.
    const handledGood = new Set<string>();
    const consumer = new DurableConsumer({
      name: 'poison-test',
      stream: CounterStream,
      messages: [CounterIncremented],
      registry: counterRegistry,
      handle: async (envelope) => {
        const data = envelope.data as { counterId: string };
        if (data.counterId === 'poison') throw new Error('handler always fails on poison');
        handledGood.add(data.counterId);
      },
      db: projector,
      ...nats,
      prefix,
      maxAttempts: 3,
      backoff: { initialMs: 5, maxMs: 20 },
      metrics,
    });
    const subject = CounterIncremented.subject(undefined, prefix);
    // Make this consumer start after the first test's events: only what we publish now is new to it,
    // but the stream holds those too; they must be handled as well (good ones).
    await consumer.start();
    try {
      const hdrs = headers();
      await nats.js.publish(subject, 'this is not json {', { headers: hdrs });
      await nats.js.publish(
        subject,
        JSON.stringify({ ...incremented('x', 1), data: { counterId: 'x', by: -1, total: 1 } }),
      );
      await nats.js.publish(
        subject,
        JSON.stringify({ ...incremented('poison', 1), streamId: 'poison', streamVersion: 1 }),
      );
      for (let i = 0; i < 10; i++) {
        await nats.js.publish(
          subject,
          JSON.stringify({ ...incremented(`good-${i}`, 1), streamId: `good-${i}`, streamVersion: 1 }),
        );
      }
      await waitUntil(
        async () => [...handledGood].filter((c) => c.startsWith('good-')).length === 10,
        'the good messages after the poison ones',
      );

      const dlqName = namespacedStream(DeadLettersStream, prefix).name;
      await waitUntil(
        async () => (await nats.jsm.streams.info(dlqName)).state.messages === 3,
        '3 dead letters',
      );
      const dlqRegistry = createRegistry([MessageDeadLettered]);
      const letters = [];
      for (let seq = 1; seq <= 3; seq++) {
        const stored = await nats.jsm.streams.getMessage(dlqName, { seq });
        letters.push(dlqRegistry.parse(stored!.json()).data);
      }
      const byCode = Object.fromEntries(letters.map((l) => [l.errorCode, l]));
      expect(Object.keys(byCode).sort()).toEqual(['Error', 'INVALID_MESSAGE', 'UNDECODABLE_MESSAGE']);
      expect(byCode['INVALID_MESSAGE']!.errorMessage).toMatch(/data\.by/);
      const poison = letters.find((l) => l.errorCode === 'Error')!;
      expect(poison.deliveries).toBe(3);
      expect(poison.errorMessage).toBe('handler always fails on poison');
      expect(poison.consumer).toBe('poison-test');
      expect(Buffer.from(poison.originalBody, 'base64').toString()).toContain('"poison"');
      const undecodable = byCode['UNDECODABLE_MESSAGE']!;
      expect(Buffer.from(undecodable.originalBody, 'base64').toString()).toBe('this is not json {');
      expect(undecodable.deliveries).toBe(1);
      // Terminated, not merely forgotten: nothing is left pending for redelivery.
      const streamName = namespacedStream(CounterStream, prefix).name;
      await waitUntil(
        async () => (await nats.jsm.consumers.info(streamName, 'poison-test')).num_ack_pending === 0,
        'no message pending on the consumer',
      );
      const dead = await metricsRegistry.getSingleMetric('gpunet_consumer_dead_lettered_total')!.get();
      expect(dead.values.reduce((sum, v) => sum + v.value, 0)).toBe(3);
    } finally {
      await consumer.stop();
    }
  });

  it('an in-process relay is woken by the commit itself, not by a poll', async () => {
    const relay = new OutboxRelay({
      db: producer,
      js: nats.js,
      channel: store.channel,
      pollIntervalMs: 60_000,
    });
    relay.start();
    try {
      await waitUntil(async () => relay.isLeader, 'relay leadership');
      const before = await streamMessages();
      await store.append('counter-wake', [incremented('counter-wake', 1)], { expectedVersion: 'no_stream' });
      // The poll interval is a minute: only NOTIFY can deliver this within the timeout.
      await waitUntil(
        async () => (await streamMessages()) === before + 1,
        'the event to be published',
        10_000,
      );
    } finally {
      await relay.stop();
    }
  });

  it('a second relay on the same schema stands by while the first holds the lock', async () => {
    const first = new OutboxRelay({ db: producer, js: nats.js, channel: store.channel, pollIntervalMs: 20 });
    const second = new OutboxRelay({ db: producer, js: nats.js, channel: store.channel, pollIntervalMs: 20 });
    first.start();
    await waitUntil(async () => first.isLeader, 'first relay leadership');
    second.start();
    try {
      await waitUntil(
        async () =>
          (
            await producer.query(
              `SELECT 1 FROM pg_stat_activity WHERE application_name = 'gpunet-outbox-relay'`,
            )
          ).length >= 2,
        'second relay connected',
      );
      expect(second.isLeader).toBe(false);
      await first.stop();
      await waitUntil(async () => second.isLeader, 'failover to the second relay');
    } finally {
      await first.stop();
      await second.stop();
    }
  });
});
