import pg from 'pg';
import { testNamespace } from '../namespace';
import { databaseUrl } from './targets';

export interface UsePostgresOptions {
  /** Names the schema (`t_<label>_<random>`). Default `'pg'`. */
  readonly label?: string;
  /** The database to create the schema in. Default: `DATABASE_URL` or `postgres://postgres@127.0.0.1:5432/test`. */
  readonly connectionString?: string;
  /** Extra pool settings (size, timeouts). `connectionString` and `options` are set by the helper. */
  readonly pool?: Omit<pg.PoolConfig, 'connectionString' | 'options'>;
}

/** A fresh schema of its own for one test suite. */
export interface PostgresTestSchema {
  /** The target database, without any schema setting (for admin connections). */
  readonly connectionString: string;
  /**
   * The target database with `search_path` set to the schema (libpq `options`), for code under test
   * that opens its own connections (TypeORM, a second pool).
   */
  readonly schemaConnectionString: string;
  /** The schema's name; a plain identifier, safe to interpolate. */
  readonly schema: string;
  /** A pool whose every connection has `search_path` set to the schema. */
  readonly pool: pg.Pool;
  /** Ends the pool and drops the schema with everything in it. Idempotent. */
  drop(): Promise<void>;
}

/** libpq `options` that put a session in `schema` (and nothing else: `public` stays out of reach). */
export const searchPathOptions = (schema: string): string => `-c search_path=${schema}`;

const withSearchPath = (connectionString: string, schema: string): string => {
  const url = new URL(connectionString);
  url.searchParams.set('options', searchPathOptions(schema));
  return url.toString();
};

/**
 * Creates a fresh schema in the target database and a pool bound to it, so suites that run at the
 * same time (other files, other projects, other CI jobs on a shared server) never see each other's
 * tables. Call `drop()` in `afterAll`.
 *
 * ```ts
 * let db: PostgresTestSchema;
 * beforeAll(async () => { db = await usePostgres({ label: 'event-store' }); });
 * afterAll(() => db.drop());
 * ```
 */
export const usePostgres = async (options: UsePostgresOptions = {}): Promise<PostgresTestSchema> => {
  const connectionString = options.connectionString ?? databaseUrl();
  const schema = testNamespace(options.label ?? 'pg');
  await withAdminClient(connectionString, (client) => client.query(`CREATE SCHEMA "${schema}"`));
  const pool = new pg.Pool({ ...options.pool, connectionString, options: searchPathOptions(schema) });
  // An idle client's error (server restart) must not crash the test process; the next query reports it.
  pool.on('error', () => undefined);
  let dropped: Promise<void> | undefined;
  return {
    connectionString,
    schemaConnectionString: withSearchPath(connectionString, schema),
    schema,
    pool,
    drop: () =>
      (dropped ??= (async () => {
        await pool.end();
        await withAdminClient(connectionString, (client) =>
          client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
        );
      })()),
  };
};

const withAdminClient = async <T>(
  connectionString: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> => {
  const client = new pg.Client({ connectionString });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot connect to Postgres at ${redact(connectionString)} (set DATABASE_URL?)`, {
      cause: error,
    });
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
};

/** The URL without its password, for error messages. */
export const redact = (connectionString: string): string => {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return '(unparsable connection string)';
  }
};
