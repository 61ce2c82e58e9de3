import 'reflect-metadata';
import { escapeLiteral, type Pool, type PoolClient, type QueryResult } from 'pg';
import { DataSource, type EntityManager, type MixedList, type QueryRunner } from 'typeorm';
import { eventingMigrations } from './migrations';

/**
 * `value` as an SQL literal, for the statements sent without parameters (`commitWith`; a
 * transaction's first statement, which then travels with BEGIN). Strings are quoted and escaped;
 * numbers must be finite. Anything else throws rather than becoming an empty string.
 */
export const sqlLiteral = (value: string | number | bigint | boolean): string => {
  if (typeof value === 'string') return escapeLiteral(value);
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value).toUpperCase();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new TypeError(`${String(value)} cannot be an SQL literal`);
};

/** `values` as an SQL array literal of `type` (`'{"a","b"}'::uuid[]`), as `sqlLiteral` does for one. */
export const sqlArrayLiteral = (values: readonly string[], type: 'text' | 'uuid'): string =>
  `${escapeLiteral(`{${values.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`)}::${type}[]`;

/** A schema name we are willing to interpolate into SQL (it cannot be a bind parameter). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export const assertSchemaName = (schema: string): string => {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(`schema ${JSON.stringify(schema)} must match ${String(SCHEMA_NAME)}`);
  }
  return schema;
};

/** A transaction: raw SQL for the hot paths, TypeORM's EntityManager for services that want entities. */
export interface Tx {
  /**
   * `statement`: a name for `sql` as a prepared statement, parsed and planned once per pooled
   * connection instead of at every call (as `Database.read`): for a handler's hot statement. A name
   * must always come with the same SQL.
   */
  query<R = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
    statement?: string,
  ): Promise<R[]>;
  /** Rows affected by an INSERT/UPDATE/DELETE. */
  execute(sql: string, params?: readonly unknown[]): Promise<number>;
  readonly manager: EntityManager;
  /** The Postgres schema holding this service's tables, already validated (safe to interpolate). */
  readonly schema: string;
  /** Runs `fn` once the transaction has committed (never if it rolls back). */
  onCommit(fn: () => void): void;
}

export type Isolation = 'REPEATABLE READ' | 'SERIALIZABLE';

export interface TransactionOptions {
  /** Default: READ COMMITTED, the server's. */
  readonly isolation?: Isolation;
  /**
   * Statements without parameters (values inlined with `sqlLiteral`) run just before COMMIT, in
   * COMMIT's round trip, once `fn` resolved: a consumer's checkpoint, say.
   */
  readonly commitWith?: readonly string[];
}

export interface DatabaseOptions {
  /** `postgres://user:pass@host:port/db`. */
  readonly url: string;
  /** The service's own Postgres schema; every eventing table lives in it. */
  readonly schema: string;
  /** Connections in the pool. Default 10. */
  readonly poolSize?: number;
  /** The service's TypeORM entities (projections). */
  readonly entities?: MixedList<string | (new () => unknown)>;
  /** The service's own migrations; they run after the eventing tables'. */
  readonly migrations?: MixedList<string | (new () => unknown)>;
  /** Application name in `pg_stat_activity`. */
  readonly applicationName?: string;
}

/**
 * The service's database: a TypeORM DataSource bound to one schema, with the eventing tables
 * created by migrations. `transaction` is the one way state changes are written.
 */
export class Database {
  readonly schema: string;
  readonly dataSource: DataSource;

  constructor(readonly options: DatabaseOptions) {
    this.schema = assertSchemaName(options.schema);
    this.dataSource = new DataSource({
      type: 'postgres',
      url: options.url,
      schema: this.schema,
      entities: options.entities ?? [],
      migrations: [
        ...eventingMigrations,
        ...((options.migrations as unknown[] | undefined) ?? []),
      ] as MixedList<new () => unknown>,
      migrationsTableName: 'migrations',
      migrationsTransactionMode: 'each',
      synchronize: false,
      logging: false,
      applicationName: options.applicationName ?? 'gpunet',
      extra: { max: options.poolSize ?? 10 },
    });
  }

  /** Connects, creates the schema if needed and runs pending migrations. */
  async open(): Promise<this> {
    await this.dataSource.initialize();
    await this.dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
    await this.dataSource.runMigrations({ transaction: 'each' });
    return this;
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }

  /**
   * Runs `fn` in one transaction; commits if it resolves, rolls back if it throws. READ COMMITTED
   * (the server's default) unless `isolation` says otherwise.
   *
   * Straight on a pooled `pg` connection, not through a TypeORM query runner (whose bookkeeping
   * measured ~0.15 ms of CPU per transaction), and with as few round trips as the work allows: a
   * round trip's sends and wake-ups are most of what a trickle of events costs on our VMs
   * (bench/eventing, libs/eventing/README.md). So BEGIN travels with the transaction's first
   * statement when that statement has no parameters, and `commitWith` (statements without
   * parameters, values inlined with `sqlLiteral`) with COMMIT.
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const client = await this.pool().connect();
    const tx = new PgTransaction(client, this.schema, this.dataSource, options.isolation);
    let broken: Error | undefined;
    try {
      let result: T;
      try {
        result = await fn(tx);
        await tx.commit(options.commitWith);
      } catch (error) {
        broken = await tx.rollback();
        throw error;
      }
      tx.committed();
      return result;
    } finally {
      tx.release();
      // A connection whose ROLLBACK failed is in an unknown state: the pool discards it.
      client.release(broken);
    }
  }

  /** The `pg` pool TypeORM's Postgres driver holds (`driver.master`), for the hot paths. */
  private pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }

  /** A single INSERT/UPDATE/DELETE outside an explicit transaction; returns the rows affected. */
  async execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return (await runner.query(sql, [...params], true)).affected ?? 0;
    } finally {
      await runner.release();
    }
  }

  /** A single statement outside an explicit transaction. */
  async query<R = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    const result = await this.dataSource.query<R[]>(sql, [...params]);
    return result;
  }

  /**
   * One statement straight on the connection pool, in autocommit, without a TypeORM query runner
   * (created, connected and released per `query`, which measured ~1 ms a call under load): for hot
   * paths such as the gateway's `GET /v1/jobs/{id}`, the outbox relay's reads and the event store's
   * group commit. Returns the rows, as `pg` parses them (as `query` returns them for a SELECT): use
   * it for a SELECT, or a call of a function that returns rows; not for a bare INSERT/UPDATE/DELETE
   * (`execute` reports those).
   *
   * `statement`: a name for `sql` as a prepared statement, which each pooled connection parses and
   * plans once instead of on every call (Postgres CPU that a hot read spends again and again). A
   * name must always come with the same SQL. Default: unnamed, parsed every time.
   */
  async read<R = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
    statement?: string,
  ): Promise<R[]> {
    const pool = this.pool();
    const result =
      statement === undefined
        ? await pool.query(sql, [...params])
        : await pool.query({ name: statement, text: sql, values: [...params] });
    return result.rows as R[];
  }
}

/**
 * A transaction on one pooled connection. BEGIN is sent lazily: with the first statement when that
 * statement has no parameters (the simple protocol carries several statements in one message), on
 * its own otherwise. `pg` runs a connection's queries one at a time in the order they were issued,
 * so BEGIN issued without waiting for it still precedes whatever is issued after it.
 */
class PgTransaction implements Tx {
  private readonly committedCallbacks: (() => void)[] = [];
  private begun: Promise<unknown> | undefined;
  private runner: QueryRunner | undefined;

  constructor(
    private readonly client: PoolClient,
    readonly schema: string,
    private readonly dataSource: DataSource,
    private readonly isolation: Isolation | undefined,
  ) {}

  private get beginSql(): string {
    return this.isolation ? `BEGIN ISOLATION LEVEL ${this.isolation}` : 'BEGIN';
  }

  onCommit(fn: () => void): void {
    this.committedCallbacks.push(fn);
  }

  /** TypeORM's EntityManager on this transaction's connection (made on first use). */
  get manager(): EntityManager {
    if (!this.runner) {
      this.begin();
      // A query runner bound to this connection, inside this transaction: TypeORM's own
      // `transaction()` on it nests as a SAVEPOINT. Its `release` never releases the connection.
      const runner = this.dataSource.createQueryRunner();
      Object.assign(runner, {
        databaseConnection: this.client,
        isTransactionActive: true,
        transactionDepth: 1,
      });
      this.runner = runner;
    }
    return this.runner.manager;
  }

  async query<R>(sql: string, params: readonly unknown[] = [], statement?: string): Promise<R[]> {
    return lastResult(await this.run(sql, params, statement)).rows as R[];
  }

  async execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    return lastResult(await this.run(sql, params)).rowCount ?? 0;
  }

  private async run(
    sql: string,
    params: readonly unknown[],
    statement?: string,
  ): Promise<QueryResult | QueryResult[]> {
    if (this.begun === undefined && params.length === 0 && statement === undefined) {
      // One round trip for both; if the statement fails, the transaction is aborted (or, on a
      // syntax error, never began) and the caller's rollback ends it.
      this.begun = Promise.resolve();
      // `pg` answers a query of several statements with one result per statement.
      return this.client.query(`${this.beginSql}; ${sql}`);
    }
    this.begin();
    await this.begun;
    return statement === undefined
      ? this.client.query(sql, [...params])
      : this.client.query({ name: statement, text: sql, values: [...params] });
  }

  /** Issues BEGIN unless it went out already; its failure surfaces at the next statement or commit. */
  private begin(): void {
    if (this.begun !== undefined) return;
    const begun = this.client.query(this.beginSql);
    begun.catch(() => undefined);
    this.begun = begun;
  }

  async commit(commitWith: readonly string[] = []): Promise<void> {
    if (this.begun === undefined && commitWith.length === 0) return; // nothing ran: nothing to commit
    const statements = [...(this.begun === undefined ? [this.beginSql] : []), ...commitWith, 'COMMIT'];
    if (this.begun !== undefined) await this.begun;
    this.begun = Promise.resolve();
    await this.client.query(statements.join('; '));
  }

  /** Rolls back; returns the error when that failed (the connection is then discarded). */
  async rollback(): Promise<Error | undefined> {
    if (this.begun === undefined) return undefined;
    try {
      // Outside a transaction (BEGIN failed, or a syntax error took it with it) Postgres only warns.
      await this.client.query('ROLLBACK');
      return undefined;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  committed(): void {
    for (const callback of this.committedCallbacks) callback();
  }

  release(): void {
    if (this.runner) Object.assign(this.runner, { databaseConnection: undefined, isReleased: true });
  }
}

/** A multi-statement query answers with one result per statement; a statement's rows are its own. */
const lastResult = (result: QueryResult | QueryResult[]): QueryResult =>
  Array.isArray(result) ? result[result.length - 1]! : result;
