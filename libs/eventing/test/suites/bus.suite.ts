import { buildEnvelope, DeadLettersStream, namespacedStream } from '@gpunet/contracts';
import { deleteNamespaceStreams, testNamespace, waitFor } from '@gpunet/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectNats,
  Database,
  DurableConsumer,
  ensureStreams,
  type NatsHandle,
  OutboxRelay,
  PostgresEventStore,
} from '../../src';
import { CounterIncremented, CounterStream, counterRegistry } from '../fixtures/counter';
import { applyAudit, auditSummary, createAuditProjection } from '../fixtures/projection';

/**
 * The bus port's contract (outbox relay → JetStream → durable consumer), run against every NATS it
 * must work on: the machine's server (int tier) and a container (contract tier).
 */
export const busContract = (target: string, urls: () => { nats: string; database: string }): void => {
  describe(`bus contract (${target})`, () => {
    const prefix = testNamespace('bus');
    const schemas = [testNamespace('bus_p'), testNamespace('bus_c')] as const;
    let producer: Database;
    let projector: Database;
    let nats: NatsHandle;

    beforeAll(async () => {
      producer = await new Database({ url: urls().database, schema: schemas[0] }).open();
      projector = await new Database({ url: urls().database, schema: schemas[1] }).open();
      await createAuditProjection(projector);
      nats = await connectNats({ servers: urls().nats, name: `bus-contract-${target}` });
      await ensureStreams(nats.jsm, [CounterStream, DeadLettersStream], prefix);
    });
    afterAll(async () => {
      await nats.close();
      await deleteNamespaceStreams(undefined, urls().nats, prefix);
      await producer.close();
      await projector.close();
      const client = new pg.Client({ connectionString: urls().database });
      await client.connect();
      for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
      await client.end();
    });

    it('delivers every appended event to the projection exactly once, in order per stream, and dead-letters poison', async () => {
      const store = new PostgresEventStore(producer, counterRegistry, prefix);
      const relay = new OutboxRelay({ db: producer, js: nats.js, channel: store.channel });
      const consumer = new DurableConsumer({
        name: 'bus-contract',
        stream: CounterStream,
        messages: [CounterIncremented],
        registry: counterRegistry,
        handle: (envelope, { tx }) => applyAudit(envelope, tx),
        db: projector,
        ...nats,
        prefix,
        maxAttempts: 2,
        backoff: { initialMs: 5, maxMs: 10 },
      });
      relay.start();
      await consumer.start();
      try {
        await Promise.all(
          Array.from({ length: 5 }, async (_, s) => {
            for (let v = 1; v <= 20; v++) {
              const env = buildEnvelope(
                CounterIncremented,
                { counterId: `c${s}`, by: 1, total: v },
                { streamId: `c${s}` },
              );
              await store.append(`c${s}`, [{ ...env, causationId: null }], {
                expectedVersion: v === 1 ? 'no_stream' : v - 1,
              });
            }
          }),
        );
        await nats.js.publish(CounterIncremented.subject(undefined, prefix), '{"not":"an envelope"}');
        const summary = await waitFor(
          async () => {
            const s = await auditSummary(projector);
            return s.events === 100 ? s : undefined;
          },
          { description: '100 events in the projection', timeoutMs: 30_000 },
        );
        expect(summary).toEqual({ events: 100, maxApplied: 1, streams: 5, violations: 0 });
        const dlq = namespacedStream(DeadLettersStream, prefix).name;
        await waitFor(async () => (await nats.jsm.streams.info(dlq)).state.messages === 1, {
          description: 'one dead letter',
        });
      } finally {
        await consumer.stop();
        await relay.stop();
      }
    });
  });
};
