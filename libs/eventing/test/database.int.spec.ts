import { type PostgresTestSchema, seededRandom, usePostgres } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Database, sqlArrayLiteral, sqlLiteral, type Tx } from '../src';

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

describe('Database.transaction: one pooled connection, as few round trips as the work allows', () => {
  const count = async (): Promise<number> =>
    (await db.read<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".items`))[0]!.n;
  const txid = `SELECT txid_current()::text AS id`;

  it('commits what fn wrote, then runs the onCommit callbacks; a throw rolls all of it back', async () => {
    const before = await count();
    const calls: string[] = [];
    await db.transaction(async (tx) => {
      tx.onCommit(() => calls.push('committed'));
      await tx.query(`INSERT INTO "${tx.schema}".items VALUES ($1, '{}', now())`, [10]);
      expect(await tx.execute(`UPDATE "${tx.schema}".items SET doc = '{"b": 1}' WHERE id = $1`, [10])).toBe(
        1,
      );
      calls.push('fn done');
    });
    expect(calls).toEqual(['fn done', 'committed']);
    expect(await count()).toBe(before + 1);

    await expect(
      db.transaction(async (tx) => {
        tx.onCommit(() => calls.push('never'));
        await tx.query(`INSERT INTO "${tx.schema}".items VALUES (11, '{}', now())`);
        await tx.query(`INSERT INTO "${tx.schema}".items VALUES ($1, '{}', now())`, [12]);
        throw new Error('handler failed');
      }),
    ).rejects.toThrow('handler failed');
    expect(calls).toEqual(['fn done', 'committed']);
    expect(await count()).toBe(before + 1);
    await db.execute(`DELETE FROM "${db.schema}".items WHERE id >= 10`);
  });

  it('runs a first statement without parameters in the transaction it opens (BEGIN travels with it)', async () => {
    const ids = await db.transaction(async (tx) => [
      (await tx.query<{ id: string }>(txid))[0]!.id,
      (await tx.query<{ id: string }>(`${txid} WHERE $1::boolean`, [true]))[0]!.id,
      (await tx.query<{ id: string }>(txid))[0]!.id,
    ]);
    expect(new Set(ids).size).toBe(1);
  });

  it('runs the commitWith statements only when fn resolved, and their failure rolls everything back', async () => {
    const before = await count();
    const insert = (id: number) => `INSERT INTO "${db.schema}".items VALUES (${id}, '{}', now())`;
    await db.transaction(
      (tx) => tx.query(`INSERT INTO "${tx.schema}".items VALUES ($1, '{}', now())`, [20]),
      { commitWith: [insert(21), insert(22)] },
    );
    expect(await count()).toBe(before + 3);
    await expect(
      db.transaction(
        async () => {
          throw new Error('nope');
        },
        { commitWith: [insert(23)] },
      ),
    ).rejects.toThrow('nope');
    const callbacks: string[] = [];
    await expect(
      db.transaction(
        async (tx) => {
          tx.onCommit(() => callbacks.push('never'));
          await tx.query(insert(24));
        },
        // A duplicate key in COMMIT's round trip: the statement before it and 24 are undone.
        { commitWith: [insert(25), insert(20)] },
      ),
    ).rejects.toThrow(/duplicate key/);
    expect(callbacks).toEqual([]);
    // Nothing ran in fn: BEGIN, the statements and COMMIT in one round trip.
    await db.transaction(async () => undefined, { commitWith: [insert(26)] });
    const ids = await db.read<{ id: number }>(
      `SELECT id FROM "${db.schema}".items WHERE id >= 20 ORDER BY id`,
    );
    expect(ids.map((r) => r.id)).toEqual([20, 21, 22, 26]);
    expect(await count()).toBe(before + 4);
    await db.execute(`DELETE FROM "${db.schema}".items WHERE id >= 20`);
  });

  it('rolls back after a failing first statement (a syntax error, or a failure after BEGIN) and the pool goes on', async () => {
    await expect(db.transaction((tx) => tx.query(`SELEC 1`))).rejects.toThrow(/syntax error/);
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`SELECT 1/0`);
      }),
    ).rejects.toThrow(/division by zero/);
    // More transactions than the pool has connections: none was left inside a transaction.
    const ids = await Promise.all(
      Array.from({ length: 25 }, () =>
        db.transaction(async (tx) => (await tx.query<{ id: string }>(txid))[0]!.id),
      ),
    );
    expect(new Set(ids).size).toBe(25);
  });

  it('runs a named prepared statement in the transaction, again on every connection, as it runs unnamed', async () => {
    const sql = `SELECT txid_current()::text AS id, count(*)::int AS n FROM "${db.schema}".items WHERE id >= $1`;
    // More transactions than the pool has connections, each using the statement twice.
    const runs = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        db.transaction(async (tx) => {
          const first = await tx.query<{ id: string; n: number }>(sql, [1 + (i % 2)], 'items_count_from');
          const again = await tx.query<{ id: string; n: number }>(sql, [1], 'items_count_from');
          const unnamed = await tx.query<{ id: string; n: number }>(sql, [1 + (i % 2)]);
          return { first: first[0]!, again: again[0]!, unnamed: unnamed[0]! };
        }),
      ),
    );
    for (const [i, { first, again, unnamed }] of runs.entries()) {
      expect(first).toEqual(unnamed);
      expect(again).toEqual({ id: first.id, n: 2 });
      expect(first.n).toBe(i % 2 === 0 ? 2 : 1);
    }
  });

  it('sets the isolation level, whether BEGIN goes alone or with the first statement', async () => {
    const show = `SHOW transaction_isolation`;
    await expect(db.transaction((tx) => tx.query(show), { isolation: 'REPEATABLE READ' })).resolves.toEqual([
      { transaction_isolation: 'repeatable read' },
    ]);
    await expect(
      db.transaction(
        async (tx) => {
          await tx.query(`SELECT $1::int`, [1]);
          return tx.query(show);
        },
        { isolation: 'SERIALIZABLE' },
      ),
    ).resolves.toEqual([{ transaction_isolation: 'serializable' }]);
  });

  it('gives TypeORM’s EntityManager on the same transaction', async () => {
    const before = await count();
    await expect(
      db.transaction(async (tx) => {
        const [fromManager] = await tx.manager.query<{ id: string }[]>(txid);
        await tx.manager.query(`INSERT INTO "${tx.schema}".items VALUES ($1, '{}', now())`, [30]);
        expect((await tx.query<{ id: string }>(txid))[0]!.id).toBe(fromManager!.id);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await count()).toBe(before);
  });
});

describe('Tx.write: statements sent without waiting, in order, failing the transaction', () => {
  const ids = async (from: number): Promise<number[]> =>
    (
      await db.read<{ id: number }>(`SELECT id FROM "${db.schema}".items WHERE id >= $1 ORDER BY id`, [from])
    ).map((r) => r.id);
  let insert = '';
  beforeAll(() => {
    insert = `INSERT INTO "${db.schema}".items VALUES ($1, '{}', now())`;
  });

  it('runs writes in the order issued, before a later query answers, and commits them with the rest', async () => {
    const seen = await db.transaction(async (tx) => {
      tx.write(insert, [100], 'items_insert');
      tx.write(
        `UPDATE "${tx.schema}".items SET doc = jsonb_build_object('n', $2::int) WHERE id = $1`,
        [100, 1],
      );
      tx.write(insert, [101], 'items_insert');
      tx.write(
        `UPDATE "${tx.schema}".items SET doc = jsonb_build_object('n', (doc->>'n')::int + 1) WHERE id = 100`,
      );
      return tx.query<{ id: number; doc: unknown }>(
        `SELECT id, doc FROM "${tx.schema}".items WHERE id >= 100 ORDER BY id`,
      );
    });
    expect(seen).toEqual([
      { id: 100, doc: { n: 2 } },
      { id: 101, doc: {} },
    ]);
    expect(await ids(100)).toEqual([100, 101]);
    await db.execute(`DELETE FROM "${db.schema}".items WHERE id >= 100`);
  });

  it('does not wait for the statement: a write blocked on a lock returns, and commits once the lock goes', async () => {
    await db.execute(`INSERT INTO "${db.schema}".items VALUES (110, '{}', now())`);
    const holder = new pg.Client({ connectionString: pgSchema.connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${db.schema}".items WHERE id = 110 FOR UPDATE`);
      const done = db.transaction(async (tx) => {
        tx.write(`UPDATE "${tx.schema}".items SET doc = '{"w": 1}' WHERE id = 110`);
        // Had write waited for its answer, this would never run: the row stays locked until it does.
        await holder.query('COMMIT');
      });
      await done;
    } finally {
      await holder.end();
    }
    expect(await db.read(`SELECT doc FROM "${db.schema}".items WHERE id = 110`)).toEqual([{ doc: { w: 1 } }]);
    await db.execute(`DELETE FROM "${db.schema}".items WHERE id >= 100`);
  });

  it('a failed write fails the query after it with its own error, and nothing of the transaction is kept', async () => {
    const callbacks: string[] = [];
    await expect(
      db.transaction(async (tx) => {
        tx.onCommit(() => callbacks.push('never'));
        tx.write(insert, [120], 'items_insert');
        tx.write(insert, [120], 'items_insert'); // duplicate key
        tx.write(insert, [121], 'items_insert');
        await tx.query(`SELECT 1`);
      }),
    ).rejects.toThrow(/duplicate key value violates unique constraint/);
    expect(callbacks).toEqual([]);
    expect(await ids(100)).toEqual([]);
  });

  it('a failed write that nothing awaited fails the commit, with or without commitWith, and keeps nothing', async () => {
    const failing = (tx: Tx) => {
      tx.write(insert, [130], 'items_insert');
      tx.write(`SELECT 1/0`);
      tx.write(insert, [131], 'items_insert');
      return Promise.resolve();
    };
    await expect(db.transaction(failing)).rejects.toThrow(/division by zero/);
    await expect(
      db.transaction(failing, { commitWith: [`INSERT INTO "${db.schema}".items VALUES (132, '{}', now())`] }),
    ).rejects.toThrow(/division by zero/);
    // Not even a first statement without parameters (BEGIN travelling with it) is kept.
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO "${tx.schema}".items VALUES (133, '{}', now())`);
        tx.write(`SELECT 1/0`);
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await ids(100)).toEqual([]);
    // Every connection came back usable, none left inside a transaction.
    const txids = await Promise.all(
      Array.from({ length: 25 }, () =>
        db.transaction(
          async (tx) => (await tx.query<{ id: string }>(`SELECT txid_current()::text AS id`))[0]!.id,
        ),
      ),
    );
    expect(new Set(txids).size).toBe(25);
  });

  it('commits all or nothing and reports the first failure, whatever the mix of writes and queries (seeded fuzz)', async () => {
    const random = seededRandom('tx-write');
    // Two failures with different messages, so that "the first" is checkable.
    const failures = [
      { sql: `SELECT 1/0`, message: /division by zero/ },
      { sql: `SELECT 'x'::int`, message: /invalid input syntax for type integer/ },
    ];
    for (let round = 0; round < 30; round++) {
      const label = `seed ${random.seed}, round ${round}`;
      const ops = Array.from({ length: random.int(1, 12) }, (_, i) => ({
        kind: random.pick(['write', 'write', 'query'] as const),
        fail: random.int(0, 5) === 0 ? random.pick(failures) : undefined,
        id: 200 + i,
      }));
      let firstFailure: RegExp | undefined;
      const outcome = db
        .transaction(async (tx) => {
          for (const op of ops) {
            const [sql, params] = op.fail ? [op.fail.sql, []] : [insert, [op.id]];
            if (op.fail) firstFailure ??= op.fail.message;
            if (op.kind === 'write') tx.write(sql, params);
            else await tx.query(sql, params);
          }
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      const error = await outcome;
      if (firstFailure) {
        expect(String(error), label).toMatch(firstFailure);
        expect(await ids(200), label).toEqual([]);
      } else {
        expect(error, label).toBeUndefined();
        expect(await ids(200), label).toEqual(ops.map((op) => op.id));
      }
      await db.execute(`DELETE FROM "${db.schema}".items WHERE id >= 200`);
    }
  });

  it('refuses a statement issued after the transaction ended instead of running it on a pooled connection', async () => {
    let leaked: Tx | undefined;
    await db.transaction(async (tx) => {
      leaked = tx;
      await tx.query(`SELECT 1`);
    });
    expect(() => leaked!.write(insert, [140])).toThrow(/after its transaction ended/);
    await expect(leaked!.query(`SELECT 1`)).rejects.toThrow(/after its transaction ended/);
    expect(await ids(100)).toEqual([]);
  });
});

describe('sqlLiteral and sqlArrayLiteral: values inlined in statements sent without parameters', () => {
  it('round-trips any text through Postgres unchanged (seeded fuzz)', async () => {
    const random = seededRandom('sql-literal');
    // Quotes, backslashes, braces, commas, the word NULL, whitespace, non-ASCII; Postgres text
    // cannot hold NUL, with or without parameters.
    const alphabet = [...'\'"\\{},; NULLnull\t\n\r$1é€😀ab'];
    for (let round = 0; round < 40; round++) {
      const values = Array.from({ length: random.int(0, 6) }, () =>
        Array.from({ length: random.int(0, 12) }, () => random.pick(alphabet)).join(''),
      );
      const one = values[0] ?? '';
      const [row] = await db.read<{ one: string; many: string[] }>(
        `SELECT ${sqlLiteral(one)} AS one, ${sqlArrayLiteral(values, 'text')} AS many`,
      );
      expect(row, `seed ${random.seed}, round ${round}`).toEqual({ one, many: values });
    }
  });

  it('inlines numbers, bigints and booleans, and refuses what has no literal', async () => {
    const [row] = await db.read(
      `SELECT ${sqlLiteral(42)}::int AS n, ${sqlLiteral(-0.5)}::float8 AS f, ${sqlLiteral(9007199254740993n)}::text AS b, ${sqlLiteral(true)} AS t`,
    );
    expect(row).toEqual({ n: 42, f: -0.5, b: '9007199254740993', t: true });
    expect(() => sqlLiteral(Number.NaN)).toThrow(/cannot be an SQL literal/);
    expect(() => sqlLiteral(Number.POSITIVE_INFINITY)).toThrow(/cannot be an SQL literal/);
    expect(() => sqlLiteral(null as unknown as string)).toThrow(/cannot be an SQL literal/);
  });

  it('casts array elements to uuid, and rejects one that is not', async () => {
    const id = '0b4c6a1e-2f7d-4c1a-9e55-3a1f0c2b7d90';
    await expect(db.read(`SELECT ${sqlArrayLiteral([id], 'uuid')} AS a`)).resolves.toEqual([{ a: [id] }]);
    await expect(
      db.read(`SELECT ${sqlArrayLiteral(["x'); DROP TABLE items; --"], 'uuid')} AS a`),
    ).rejects.toThrow(/invalid input syntax for type uuid/);
  });
});
