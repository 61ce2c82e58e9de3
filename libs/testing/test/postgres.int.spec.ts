import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl, type PostgresTestSchema, usePostgres } from '../src';

const schemaExists = async (schema: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      'SELECT 1 FROM information_schema.schemata WHERE schema_name = $1',
      [schema],
    );
    return rowCount === 1;
  } finally {
    await client.end();
  }
};

describe('usePostgres', () => {
  let a: PostgresTestSchema;
  let b: PostgresTestSchema;

  beforeAll(async () => {
    [a, b] = await Promise.all([usePostgres({ label: 'pg-iso-a' }), usePostgres({ label: 'pg-iso-b' })]);
  });
  afterAll(async () => {
    await Promise.all([a?.drop(), b?.drop()]);
  });

  it('creates a fresh schema per call, in the target database', async () => {
    expect(a.schema).toMatch(/^t_pg_iso_a_[a-z0-9]{10}$/);
    expect(a.schema).not.toBe(b.schema);
    expect(a.connectionString).toBe(databaseUrl());
    await expect(schemaExists(a.schema)).resolves.toBe(true);
    const { rows } = await a.pool.query<{ schema: string }>('SELECT current_schema() AS schema');
    expect(rows[0]?.schema).toBe(a.schema);
  });

  it('keeps suites apart: the same table name in two schemas holds different rows', async () => {
    for (const [db, value] of [
      [a, 'from a'],
      [b, 'from b'],
    ] as const) {
      await db.pool.query('CREATE TABLE widgets (name text NOT NULL)');
      await db.pool.query('INSERT INTO widgets (name) VALUES ($1)', [value]);
    }
    const { rows } = await a.pool.query<{ name: string }>('SELECT name FROM widgets');
    expect(rows).toEqual([{ name: 'from a' }]);
    const where = await a.pool.query<{ table_schema: string }>(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'widgets' AND table_schema IN ($1, $2) ORDER BY 1",
      [a.schema, b.schema],
    );
    expect(where.rows.map((r) => r.table_schema).sort()).toEqual([a.schema, b.schema].sort());
  });

  it('gives a connection string that lands in the schema too', async () => {
    const client = new pg.Client({ connectionString: b.schemaConnectionString });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>('SELECT name FROM widgets');
      expect(rows).toEqual([{ name: 'from b' }]);
    } finally {
      await client.end();
    }
  });

  it('drop() removes the schema and everything in it, and is idempotent', async () => {
    const c = await usePostgres({ label: 'pg-drop' });
    await c.pool.query('CREATE TABLE t (id int)');
    await expect(schemaExists(c.schema)).resolves.toBe(true);
    await c.drop();
    await c.drop();
    await expect(schemaExists(c.schema)).resolves.toBe(false);
  });

  it('names the target when it cannot connect', async () => {
    await expect(
      usePostgres({ connectionString: 'postgres://nobody:secret@127.0.0.1:1/none' }),
    ).rejects.toThrow('cannot connect to Postgres at postgres://nobody:***@127.0.0.1:1/none');
  });
});
