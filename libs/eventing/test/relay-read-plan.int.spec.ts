import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../src';
import { outboxReadSql } from '../src/outbox/outbox-relay';
import { CounterIncremented } from './fixtures/counter';
import { DATABASE_URL, dropSchema, uniqueName } from './support';

const schema = uniqueName('relayplan');
const db = new Database({ url: DATABASE_URL, schema });
// One connection, as a pooled one the relay reads on: a prepared statement, custom plans first.
const client = new pg.Client({ connectionString: DATABASE_URL });

/** The plan Postgres chooses for the relay's read on `client`, as text. */
const planOf = async (mode: 'force_custom_plan' | 'force_generic_plan'): Promise<string> => {
  await client.query(`SET plan_cache_mode = ${mode}`);
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE relay_read(512, '{}')`);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
};

beforeAll(async () => {
  await db.open();
  await client.connect();
  // A service some time into its life: thousands of events, and statistics that saw the outbox
  // long (a backlog while NATS was down, say) and were not renewed after the relay drained it.
  await client.query(
    `INSERT INTO "${schema}".events (stream_id, stream_version, event_id, type, version, data, correlation_id, occurred_at)
     SELECT 'counter-' || i, 1, gen_random_uuid(), $1, 1,
            jsonb_build_object('counterId', 'counter-' || i, 'by', 1, 'total', i), 'corr', now()
     FROM generate_series(1, 5000) i`,
    [CounterIncremented.type],
  );
  await client.query(
    `INSERT INTO "${schema}".outbox (event_id, subject, type, version)
     SELECT event_id, $1, type, version FROM "${schema}".events ORDER BY global_position DESC LIMIT 1000`,
    [CounterIncremented.subject()],
  );
  await client.query(`ANALYZE "${schema}".events`);
  await client.query(`ANALYZE "${schema}".outbox`);
  await client.query(
    `DELETE FROM "${schema}".outbox WHERE id NOT IN (SELECT id FROM "${schema}".outbox ORDER BY id LIMIT 10)`,
  );
  await client.query(`PREPARE relay_read(int, bigint[]) AS ${outboxReadSql(schema)}`);
});
afterAll(async () => {
  await client.end();
  await db.close();
  await dropSchema(schema);
});

describe("the outbox relay's read", () => {
  it.each(['force_custom_plan', 'force_generic_plan'] as const)(
    'looks each event up through its index, never scanning events (%s)',
    async (mode) => {
      const plan = await planOf(mode);
      // A join the planner may turn into `Hash Left Join` over `Seq Scan on events`: every event
      // read at every relay round (that plan took ~17 ms at 5,000 events, in bench/eventing).
      expect(plan).not.toMatch(/Seq Scan on events/);
      expect(plan).toMatch(/Index Scan using events_event_id_key on events/);
    },
  );

  it('returns the rows in id order, each event row with its event', async () => {
    const { rows } = await client.query<{ id: string; stream_id: string | null; data: unknown }>(
      `EXECUTE relay_read(512, '{}')`,
    );
    expect(rows).toHaveLength(10);
    expect(rows.map((r) => Number(r.id))).toEqual([...rows.map((r) => Number(r.id))].sort((a, b) => a - b));
    for (const row of rows) {
      expect(row.stream_id).toMatch(/^counter-\d+$/);
      expect(row.data).toMatchObject({ counterId: row.stream_id, by: 1 });
    }
  });
});
