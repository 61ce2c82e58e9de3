import 'reflect-metadata';
import { DataSource, type EntityManager, type MixedList, type QueryRunner } from 'typeorm';
import { eventingMigrations } from './migrations';

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
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Rows affected by an INSERT/UPDATE/DELETE. */
  execute(sql: string, params?: readonly unknown[]): Promise<number>;
  readonly manager: EntityManager;
  /** The Postgres schema holding this service's tables, already validated (safe to interpolate). */
  readonly schema: string;
  /** Runs `fn` once the transaction has committed (never if it rolls back). */
  onCommit(fn: () => void): void;
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
   * (the server's default) unless `isolation` says otherwise — setting it costs a round trip.
   */
  async transaction<T>(
    fn: (tx: Tx) => Promise<T>,
    isolation?: 'REPEATABLE READ' | 'SERIALIZABLE',
  ): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction(isolation);
      const committed: (() => void)[] = [];
      try {
        const result = await fn(txFor(runner, this.schema, committed));
        await runner.commitTransaction();
        for (const callback of committed) callback();
        return result;
      } catch (error) {
        if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
        throw error;
      }
    } finally {
      await runner.release();
    }
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
    const pool = (this.dataSource.driver as unknown as { master: PgPool }).master;
    return (
      await pool.query<R>(
        statement === undefined ? sql : { name: statement, text: sql, values: [...params] },
        statement === undefined ? [...params] : undefined,
      )
    ).rows;
  }
}

/** What `read` uses of the `pg` pool TypeORM's Postgres driver holds (`driver.master`). */
interface PgPool {
  query<R>(
    query: string | { name: string; text: string; values: unknown[] },
    params: unknown[] | undefined,
  ): Promise<{ rows: R[] }>;
}

const txFor = (runner: QueryRunner, schema: string, committed: (() => void)[]): Tx => ({
  schema,
  onCommit: (fn) => committed.push(fn),
  manager: runner.manager,
  query: async <R>(sql: string, params: readonly unknown[] = []) => {
    const result = await runner.query(sql, [...params], true);
    return result.records as R[];
  },
  execute: async (sql: string, params: readonly unknown[] = []) => {
    const result = await runner.query(sql, [...params], true);
    return result.affected ?? 0;
  },
});
