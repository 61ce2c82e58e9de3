import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../src';
import { CounterIncremented } from './fixtures/counter';
import { DATABASE_URL, dropSchema, uniqueName } from './support';

// One connection that keeps its PL/pgSQL plans across calls, as a pooled connection does.
const schema = uniqueName('plans');
const db = new Database({ url: DATABASE_URL, schema });
const client = new pg.Client({ connectionString: DATABASE_URL });
const notices: string[] = [];
let ids = 0;

/** Appends one event to a new stream through `append_batch` on `client`. */
const appendNew = async (streamId: string): Promise<void> => {
  const eventId = `0192d3a4-5b6c-7d8e-9f00-${String(++ids).padStart(12, '0')}`;
  const rows = await client.query<{ out_position: string | null }>(
    `SELECT * FROM "${schema}".append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      [streamId],
      [0],
      [1],
      [eventId],
      [CounterIncremented.type],
      [1],
      [JSON.stringify({ counterId: streamId, by: 1, total: 1 })],
      ['corr'],
      [null],
      ['2026-12-02T03:00:00.000Z'],
      [CounterIncremented.subject()],
      [null],
    ],
  );
  expect(rows.rows[0]?.out_position).not.toBeNull();
};

beforeAll(async () => {
  await db.open();
  await client.connect();
  client.on('notice', (n) => notices.push(String(n.message)));
});
afterAll(async () => {
  await client.end();
  await db.close();
  await dropSchema(schema);
});

describe('append_batch plans', () => {
  it('reads the streams through the index on a connection whose first appends met a small table', async () => {
    // A small table with statistics, as autovacuum leaves a young service's: on it a sequential scan
    // is the cheapest read, and the first plans are made then.
    await client.query(
      `INSERT INTO "${schema}".events (stream_id, stream_version, event_id, type, version, data, correlation_id, occurred_at)
       SELECT 'seed-' || i, 1, gen_random_uuid(), $1, 1, '{}', 'corr', now() FROM generate_series(1, 8) i`,
      [CounterIncremented.type],
    );
    await client.query(`ANALYZE "${schema}".events`);
    // Enough calls while `events` is small for PL/pgSQL to settle on a cached plan (it tries five).
    for (let i = 0; i < 8; i++) await appendNew(`early-${i}`);
    await client.query(
      `INSERT INTO "${schema}".events (stream_id, stream_version, event_id, type, version, data, correlation_id, occurred_at)
       SELECT 'grown-' || i, 1, gen_random_uuid(), $1, 1, '{}', 'corr', now() FROM generate_series(1, 5000) i`,
      [CounterIncremented.type],
    );
    // More calls on the grown table: their custom plans now cost more than the generic one PL/pgSQL
    // made while the table was small, which it then keeps.
    for (let i = 0; i < 20; i++) await appendNew(`later-${i}`);
    // Every statement the function runs, with its plan, as notices to this client.
    await client.query(`LOAD 'auto_explain'`);
    await client.query(`SET auto_explain.log_min_duration = 0`);
    await client.query(`SET auto_explain.log_nested_statements = on`);
    await client.query(`SET auto_explain.log_level = notice`);
    notices.length = 0;
    await appendNew('late');
    const plans = notices.filter((n) => n.includes('.events'));
    expect(plans.length).toBeGreaterThan(0);
    // Migration 0003's cached plan read the versions with `Seq Scan on events`: O(table) per append;
    // so would 0005's generic plans without `enable_seqscan = off`.
    expect(plans.filter((p) => /Seq Scan on events/.test(p))).toEqual([]);
    // `Bitmap Index Scan on events_pkey` (0004, planned per call) or `Index Only Scan using
    // events_pkey` (0005, generic).
    expect(plans.some((p) => /Index.* Scan (on|using) events_pkey/.test(p))).toBe(true);
  });
});
