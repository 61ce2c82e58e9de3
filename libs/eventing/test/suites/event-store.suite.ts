import { buildEnvelope } from '@gpunet/contracts';
import { testNamespace } from '@gpunet/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConcurrencyError, Database, type NewEvent, PostgresEventStore } from '../../src';
import { CounterIncremented, counterRegistry } from '../fixtures/counter';

/**
 * The event-store port's contract, run against every Postgres it must work on: the machine's server
 * (int tier) and a container (contract tier).
 */
export const eventStoreContract = (target: string, databaseUrl: () => string): void => {
  describe(`event store contract (${target})`, () => {
    const schema = testNamespace('es_contract');
    let db: Database;
    let store: PostgresEventStore;
    const event = (counter: string, total: number): NewEvent => ({
      ...buildEnvelope(CounterIncremented, { counterId: counter, by: 1, total }, { streamId: counter }),
      causationId: null,
    });

    beforeAll(async () => {
      db = await new Database({ url: databaseUrl(), schema, poolSize: 8 }).open();
      store = new PostgresEventStore(db, counterRegistry);
    });
    afterAll(async () => {
      await db.close();
      const client = new pg.Client({ connectionString: databaseUrl() });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    });

    it('appends at the expected version and reads back in order', async () => {
      await store.append('s-1', [event('s-1', 1), event('s-1', 2)], { expectedVersion: 'no_stream' });
      await store.append('s-1', [event('s-1', 3)], { expectedVersion: 2 });
      expect((await store.readStream('s-1')).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
    });

    it('of two concurrent appends at the same expected version exactly one wins, 20 times over', async () => {
      await store.append('s-race', [event('s-race', 1)], { expectedVersion: 'no_stream' });
      for (let round = 1; round <= 20; round++) {
        const results = await Promise.allSettled([
          store.append('s-race', [event('s-race', round + 1)], { expectedVersion: round }),
          store.append('s-race', [event('s-race', round + 1)], { expectedVersion: round }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(lost?.reason).toBeInstanceOf(ConcurrencyError);
      }
      expect(await store.currentVersion('s-race')).toBe(21);
    });

    it('writes one outbox row per event, in stream order, in the same transaction', async () => {
      await store.append('s-out', [event('s-out', 1), event('s-out', 2), event('s-out', 3)], {
        expectedVersion: 'no_stream',
      });
      const rows = await db.query<{ event_id: string }>(
        `SELECT o.event_id FROM "${schema}".outbox o JOIN "${schema}".events e USING (event_id) WHERE e.stream_id = 's-out' ORDER BY o.id`,
      );
      const events = await store.readStream('s-out');
      expect(rows.map((r) => r.event_id)).toEqual(events.map((e) => e.eventId));
    });

    it('a rolled-back transaction leaves neither events nor outbox rows', async () => {
      await expect(
        db.transaction(async (tx) => {
          await store.append('s-rollback', [event('s-rollback', 1)], { expectedVersion: 'no_stream', tx });
          throw new Error('handler failed after appending');
        }),
      ).rejects.toThrow('handler failed');
      expect(await store.currentVersion('s-rollback')).toBe(0);
      const rows = await db.query(
        `SELECT 1 FROM "${schema}".outbox o LEFT JOIN "${schema}".events e USING (event_id) WHERE e.event_id IS NULL`,
      );
      expect(rows).toHaveLength(0);
    });
  });
};
