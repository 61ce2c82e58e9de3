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
  /**
   * Sends a statement whose result the caller does not need (a projection's upsert, say) without
   * waiting for it: it runs in order with the transaction's other statements, and the caller goes on
   * at once, so a batch of handlers that only write costs its statements' execution, not one round
   * trip each (the connection is pipelined). A failure fails the transaction: the next `query` or
   * `execute`, and the commit, reject with it, and nothing of the transaction is kept. `statement`
   * as in `query`.
   */
  write(sql: string, params?: readonly unknown[], statement?: string): void;
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
      // Pipelined connections (`pg`'s pipeline mode): a statement issued while others are in
      // flight on the connection is sent at once instead of after their answers, so `Tx.write`
      // and BEGIN cost no round trip of their own. Statements still run, and answer, in the order
      // they were issued, each with its own error; `pg` refuses cursors (`rows`, pg-cursor,
      // pg-query-stream) on such a connection, and nothing here uses them.
      extra: { max: options.poolSize ?? 10, pipeline: true },
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
 * A transaction on one pooled, pipelined connection. BEGIN is sent lazily: with the first statement
 * when that statement has no parameters (the simple protocol carries several statements in one
 * message), right before it otherwise, without waiting for its answer. The connection runs and
 * answers statements in the order they were issued, so whatever is issued after BEGIN runs inside
 * the transaction, and a `write` before a `query` has run when the query answers.
 *
 * A failed statement aborts the transaction in Postgres, and every statement after it fails with
 * "current transaction is aborted"; the first failure is kept (`failure`) and is what the caller
 * sees. COMMIT of an aborted transaction answers ROLLBACK without an error: `commit` checks.
 */
class PgTransaction implements Tx {
  private readonly committedCallbacks: (() => void)[] = [];
  private begun: Promise<unknown> | undefined;
  private runner: QueryRunner | undefined;
  /** The first failure of BEGIN or of a `write`. */
  private failure: { error: unknown } | undefined;
  /** Settles after the last `write` issued (and so after every earlier one) settled. */
  private lastWrite: Promise<void> = Promise.resolve();
  /** Set once commit or rollback began: a statement issued after that would run outside it. */
  private over = false;

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
      this.assertOpen();
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

  write(sql: string, params: readonly unknown[] = [], statement?: string): void {
    this.assertOpen();
    // After a failure every statement fails: send nothing more; the commit rejects with it.
    if (this.failure) return;
    this.begin();
    const sent = this.send(sql, params, statement);
    this.lastWrite = sent.then(
      () => undefined,
      (error: unknown) => {
        this.failure ??= { error };
      },
    );
  }

  private async run(
    sql: string,
    params: readonly unknown[],
    statement?: string,
  ): Promise<QueryResult | QueryResult[]> {
    this.assertOpen();
    this.throwIfFailed();
    if (this.begun === undefined && params.length === 0 && statement === undefined) {
      // One round trip for both; if the statement fails, the transaction is aborted (or, on a
      // syntax error, never began) and the caller's rollback ends it.
      this.begun = Promise.resolve();
      // `pg` answers a query of several statements with one result per statement.
      return this.client.query(`${this.beginSql}; ${sql}`);
    }
    this.begin();
    try {
      return await this.send(sql, params, statement);
    } catch (error) {
      throw await this.firstFailure(error);
    }
  }

  private send(sql: string, params: readonly unknown[], statement?: string): Promise<QueryResult> {
    return statement === undefined
      ? this.client.query(sql, [...params])
      : this.client.query({ name: statement, text: sql, values: [...params] });
  }

  /**
   * `error`, unless an earlier write (or BEGIN) failed: then `error` is only Postgres's "current
   * transaction is aborted", and the earlier failure is the one to report. Answers come in order,
   * so every earlier write has settled by the time a later statement's answer came.
   */
  private async firstFailure(error: unknown): Promise<unknown> {
    await this.settled();
    return this.failure?.error ?? error;
  }

  /** Resolves once BEGIN and every write issued so far have answered. */
  private async settled(): Promise<void> {
    await this.lastWrite;
    await this.begun?.catch(() => undefined);
  }

  /** Issues BEGIN unless it went out already; its failure is the transaction's failure. */
  private begin(): void {
    if (this.begun !== undefined) return;
    const begun = this.client.query(this.beginSql);
    begun.catch((error: unknown) => {
      this.failure ??= { error };
    });
    this.begun = begun;
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  private assertOpen(): void {
    if (this.over) {
      throw new Error(
        'a statement was issued after its transaction ended (a handler that did not await its work?)',
      );
    }
  }

  async commit(commitWith: readonly string[] = []): Promise<void> {
    this.over = true;
    this.throwIfFailed();
    if (this.begun === undefined && commitWith.length === 0) return; // nothing ran: nothing to commit
    const statements = [...(this.begun === undefined ? [this.beginSql] : []), ...commitWith, 'COMMIT'];
    this.begun ??= Promise.resolve();
    let result: QueryResult | QueryResult[];
    try {
      result = await this.client.query(statements.join('; '));
    } catch (error) {
      throw await this.firstFailure(error);
    }
    // An aborted transaction's COMMIT rolls back and says so in its tag, not with an error.
    await this.settled();
    this.throwIfFailed();
    if (lastResult(result).command !== 'COMMIT') {
      throw new Error(`the transaction was not committed: Postgres answered ${lastResult(result).command}`);
    }
  }

  /** Rolls back; returns the error when that failed (the connection is then discarded). */
  async rollback(): Promise<Error | undefined> {
    this.over = true;
    if (this.begun === undefined) return undefined;
    try {
      // Outside a transaction (BEGIN failed, or a syntax error took it with it) Postgres only warns.
      await this.client.query('ROLLBACK');
      // Writes still in flight answered before the ROLLBACK did; their failures are settled.
      await this.lastWrite;
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
