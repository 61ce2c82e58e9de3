import { type PostgresTestSchema, usePostgres } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../src';

let pgSchema: PostgresTestSchema;
let db: Database;

beforeAll(async () => {
  pgSchema = await usePostgres({ label: 'database' });
  db = await new Database({ url: pgSchema.connectionString, schema: pgSchema.schema }).open();
  await db.execute(
    `CREATE TABLE "${db.schema}".items (id int PRIMARY KEY, doc jsonb NOT NULL, at timestamptz NOT NULL)`,
  );
  await db.execute(
    `INSERT INTO "${db.schema}".items VALUES (1, '{"a": [1, 2]}', '2030-01-01T00:00:00Z'), (2, '{"a": []}', '2030-01-02T00:00:00Z')`,
  );
});
afterAll(async () => {
  await db.close();
  await pgSchema.drop();
});

describe('Database.read: a SELECT straight on the pool', () => {
  it('returns the same rows as query, parameters and types included', async () => {
    const sql = `SELECT id, doc, at FROM "${db.schema}".items WHERE id >= $1 ORDER BY id`;
    const read = await db.read<{ id: number; doc: unknown; at: Date }>(sql, [1]);
    expect(read).toEqual(await db.query(sql, [1]));
    expect(read[0]).toEqual({ id: 1, doc: { a: [1, 2] }, at: new Date('2030-01-01T00:00:00Z') });
    await expect(db.read(sql, [3])).resolves.toEqual([]);
  });

  it('reads through a named prepared statement, again and with other parameters, as it reads unnamed', async () => {
    const sql = `SELECT id, doc, at FROM "${db.schema}".items WHERE id >= $1 ORDER BY id`;
    // More calls than the pool has connections, concurrently: each connection prepares it once.
    const reads = await Promise.all(
      [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3].map((from) => db.read(sql, [from], 'items_from')),
    );
    for (const [i, from] of [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3].entries())
      expect(reads[i]).toEqual(await db.read(sql, [from]));
    expect(reads[0]).toHaveLength(2);
  });

  it('rejects with the server’s error, and the pool goes on', async () => {
    await expect(db.read(`SELECT * FROM "${db.schema}".missing`)).rejects.toThrow(/does not exist/);
    await expect(db.read(`SELECT count(*)::int AS n FROM "${db.schema}".items`)).resolves.toEqual([{ n: 2 }]);
  });
});
