import { buildEnvelope } from '@gpunet/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectNats,
  Database,
  ensureStreams,
  type NatsHandle,
  type NewEvent,
  OutboxRelay,
  PostgresEventStore,
} from '../src';
import { CounterIncremented, CounterStream, counterRegistry } from './fixtures/counter';
import { DATABASE_URL, deleteStreams, dropSchema, NATS_URL, uniqueName, waitUntil } from './support';

// The relay deletes published rows off its publishing path; these tests pin down what that may
// and may not do: never publish a row twice while its DELETE is pending or failing, retry the
// DELETE, and leave the outbox empty once it succeeds.
const prefix = uniqueName('reldel');
const schema = uniqueName('reldel');
const db = new Database({ url: DATABASE_URL, schema });
const store = new PostgresEventStore(db, counterRegistry, prefix);
let nats: NatsHandle;

const incremented = (counter: string, total: number): NewEvent => {
  const env = buildEnvelope(CounterIncremented, { counterId: counter, by: 1, total }, { streamId: counter });
  return { ...env, causationId: null };
};
const outboxSize = async (): Promise<number> =>
  Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".outbox`))[0]?.n);

beforeAll(async () => {
  await db.open();
  nats = await connectNats({ servers: NATS_URL, name: 'relay-deletes-test' });
  await ensureStreams(nats.jsm, [CounterStream], prefix);
  // A switch that makes every DELETE from the outbox fail, as an unreachable database would.
  await db.query(`CREATE TABLE "${schema}".fail_deletes (on_ boolean NOT NULL)`);
  await db.query(`INSERT INTO "${schema}".fail_deletes VALUES (false)`);
  await db.query(`
    CREATE FUNCTION "${schema}".refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (SELECT on_ FROM "${schema}".fail_deletes) THEN RAISE EXCEPTION 'deletes refused by the test'; END IF;
      RETURN OLD;
    END $$`);
  await db.query(
    `CREATE TRIGGER refuse_delete BEFORE DELETE ON "${schema}".outbox FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse_delete()`,
  );
  // Counts DELETE statements on the outbox (not rows).
  await db.query(`CREATE TABLE "${schema}".delete_statements (n int NOT NULL)`);
  await db.query(`INSERT INTO "${schema}".delete_statements VALUES (0)`);
  await db.query(`
    CREATE FUNCTION "${schema}".count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE "${schema}".delete_statements SET n = n + 1;
      RETURN NULL;
    END $$`);
  await db.query(
    `CREATE TRIGGER count_delete AFTER DELETE ON "${schema}".outbox FOR EACH STATEMENT EXECUTE FUNCTION "${schema}".count_delete()`,
  );
});

const deleteStatements = async (): Promise<number> =>
  (await db.query<{ n: number }>(`SELECT n FROM "${schema}".delete_statements`))[0]!.n;

afterAll(async () => {
  await nats.close();
  await deleteStreams(NATS_URL, prefix);
  await db.close();
  await dropSchema(schema);
});

describe('outbox relay deletes', () => {
  it('a row whose DELETE fails is not published again; the DELETE is retried and the outbox empties', async () => {
    // Every publish, duplicates included (JetStream's de-duplication would hide them from the stream).
    const sends: string[] = [];
    const sub = nats.nc.subscribe(CounterIncremented.subject(undefined, prefix), {
      callback: (_error, msg) => {
        sends.push(msg.headers?.get('Nats-Msg-Id') ?? '');
      },
    });
    const deleteFailures: string[] = [];
    const relay = new OutboxRelay({
      db,
      js: nats.js,
      channel: store.channel,
      pollIntervalMs: 20,
      onError: (_error, context) => {
        if (context.includes('could not delete')) deleteFailures.push(context);
      },
    });
    await db.query(`UPDATE "${schema}".fail_deletes SET on_ = true`);
    const events = [1, 2, 3].map((n) => incremented(`counter-d${n}`, 1));
    for (const [i, e] of events.entries())
      await store.append(`counter-d${i + 1}`, [e], { expectedVersion: 'no_stream' });
    relay.start();
    try {
      // Several rounds run while the rows cannot be deleted.
      await waitUntil(async () => deleteFailures.length >= 3 || undefined, 'three failed DELETEs');
      expect(await outboxSize()).toBe(3);
      await db.query(`UPDATE "${schema}".fail_deletes SET on_ = false`);
      await waitUntil(async () => (await outboxSize()) === 0 || undefined, 'the outbox to empty');
      await nats.nc.flush();
      expect(sends.toSorted()).toEqual(events.map((e) => e.eventId).toSorted());
    } finally {
      sub.unsubscribe();
      await relay.stop();
    }
  });

  it('one DELETE takes the rows of many rounds: after deleteDelayMs, or at once when a batch gathered', async () => {
    const sends: string[] = [];
    const sub = nats.nc.subscribe(CounterIncremented.subject(undefined, prefix), {
      callback: (_error, msg) => {
        sends.push(msg.headers?.get('Nats-Msg-Id') ?? '');
      },
    });
    // A delay no test waits for: the DELETE below can only be the full batch's.
    const relay = new OutboxRelay({
      db,
      js: nats.js,
      channel: store.channel,
      batchSize: 4,
      deleteDelayMs: 600_000,
    });
    relay.start();
    const before = await deleteStatements();
    try {
      // Three rounds of one row each: published, and waiting together for their DELETE.
      for (let n = 1; n <= 3; n++) {
        await store.append(`counter-gather${n}`, [incremented(`counter-gather${n}`, 1)], {
          expectedVersion: 'no_stream',
        });
        await waitUntil(async () => sends.length === n || undefined, `row ${n} published`);
      }
      expect(await outboxSize()).toBe(3);
      expect(await deleteStatements()).toBe(before);
      // The fourth makes a batch: one DELETE for all four.
      await store.append('counter-gather4', [incremented('counter-gather4', 1)], {
        expectedVersion: 'no_stream',
      });
      await waitUntil(async () => (await outboxSize()) === 0 || undefined, 'the outbox to empty');
      expect(await deleteStatements()).toBe(before + 1);
      expect(sends).toHaveLength(4);
    } finally {
      sub.unsubscribe();
      await relay.stop();
    }
  });

  it('drain resolves only once the published rows are deleted', async () => {
    const relay = new OutboxRelay({ db, js: nats.js, channel: store.channel });
    for (let n = 1; n <= 5; n++)
      await store.append(`counter-drain${n}`, [incremented(`counter-drain${n}`, 1)], {
        expectedVersion: 'no_stream',
      });
    await relay.drain();
    expect(await outboxSize()).toBe(0);
  });

  it('reads again at once only after a full batch or a commit: a round that found rows is not followed by an empty read', async () => {
    const sends: string[] = [];
    const sub = nats.nc.subscribe(CounterIncremented.subject(undefined, prefix), {
      callback: (_error, msg) => {
        sends.push(msg.headers?.get('Nats-Msg-Id') ?? '');
      },
    });
    // The relay's reads of the outbox (its prepared statement), counted as they are sent.
    let reads = 0;
    const read = db.read.bind(db);
    db.read = <R>(sql: string, params?: readonly unknown[], statement?: string) => {
      if (statement === 'gpunet_outbox_relay_read') reads++;
      return read<R>(sql, params, statement);
    };
    // No safety-net poll in this test's time: every read below is the relay's answer to a commit.
    const relay = new OutboxRelay({
      db,
      js: nats.js,
      channel: store.channel,
      batchSize: 2,
      pollIntervalMs: 600_000,
      deleteDelayMs: 0,
    });
    try {
      relay.start();
      /** Appends, waits until published and deleted; returns the reads sent meanwhile. */
      const readsFor = async (streamId: string, totals: number[]) => {
        const before = reads;
        const published = sends.length + totals.length;
        await store.append(
          streamId,
          totals.map((total) => incremented(streamId, total)),
          { expectedVersion: 'no_stream' },
        );
        await waitUntil(async () => sends.length === published || undefined, `${streamId} published`);
        // The DELETE runs on a timer after the round: a read right after the round is sent before it.
        await waitUntil(async () => (await outboxSize()) === 0 || undefined, 'the outbox to empty');
        return reads - before;
      };
      // The first commit may meet the relay's start-up read: from then on the relay is idle.
      await readsFor('counter-reads1', [1]);
      expect(await readsFor('counter-reads2', [1])).toBe(1);
      // Three rows in one commit, batches of two: a full read, then the rest, then nothing.
      expect(await readsFor('counter-reads3', [1, 2, 3])).toBe(2);
    } finally {
      sub.unsubscribe();
      await relay.stop();
      db.read = read;
    }
  });
});
