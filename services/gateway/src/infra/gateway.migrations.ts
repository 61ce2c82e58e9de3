import { migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The gateway's tables: API keys (hashes only), tenants' defaults, idempotent responses, and the
 * jobs read model (one row per job, with its history of events for SSE).
 */
export class GatewayTables1764480000000 implements MigrationInterface {
  readonly name = 'GatewayTables1764480000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".api_keys (
        key_id      text        PRIMARY KEY,
        secret_hash text        NOT NULL,
        tenant_id   text        NOT NULL,
        scopes      text[]      NOT NULL,
        name        text        NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        revoked_at  timestamptz NULL
      )`);
    await runner.query(`CREATE INDEX api_keys_tenant ON "${s}".api_keys (tenant_id)`);
    await runner.query(`
      CREATE TABLE "${s}".tenants (
        tenant_id      text PRIMARY KEY,
        default_subnet text NULL
      )`);
    await runner.query(`
      CREATE TABLE "${s}".idempotency (
        tenant_id    text        NOT NULL,
        key          text        NOT NULL,
        request_hash text        NOT NULL,
        status       int         NULL,
        body         jsonb       NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, key)
      )`);
    await runner.query(`
      CREATE TABLE "${s}".jobs (
        job_id       text        PRIMARY KEY,
        tenant_id    text        NOT NULL,
        status       text        NOT NULL,
        submitted_at timestamptz NOT NULL,
        updated_at   timestamptz NOT NULL,
        view         jsonb       NOT NULL,
        spec         jsonb       NOT NULL
      )`);
    await runner.query(
      `CREATE INDEX jobs_tenant_submitted ON "${s}".jobs (tenant_id, submitted_at DESC, job_id DESC)`,
    );
    await runner.query(`
      CREATE TABLE "${s}".job_events (
        seq         bigserial   PRIMARY KEY,
        job_id      text        NOT NULL,
        event_id    text        NOT NULL UNIQUE,
        type        text        NOT NULL,
        occurred_at timestamptz NOT NULL,
        data        jsonb       NOT NULL
      )`);
    await runner.query(`CREATE INDEX job_events_job ON "${s}".job_events (job_id, seq)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    for (const t of ['job_events', 'jobs', 'idempotency', 'tenants', 'api_keys'])
      await runner.query(`DROP TABLE "${s}".${t}`);
  }
}

/**
 * A per-job event sequence, assigned while the job's row is locked (`jobs.last_seq`), so that a
 * job's events commit in the order of their numbers: the SSE cursor `job_seq > last` can never pass
 * an event that commits later. The global `seq` (one bigserial taken by three concurrent consumers)
 * promises no such thing across transactions. Existing rows are numbered in `seq` order.
 */
export class JobEventSequence1764998400000 implements MigrationInterface {
  readonly name = 'JobEventSequence1764998400000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`ALTER TABLE "${s}".jobs ADD COLUMN last_seq bigint NOT NULL DEFAULT 0`);
    await runner.query(`ALTER TABLE "${s}".job_events ADD COLUMN job_seq bigint NULL`);
    await runner.query(`
      UPDATE "${s}".job_events e SET job_seq = n.rn
      FROM (SELECT seq, row_number() OVER (PARTITION BY job_id ORDER BY seq) AS rn
            FROM "${s}".job_events) n
      WHERE e.seq = n.seq`);
    await runner.query(`
      UPDATE "${s}".jobs j SET last_seq = m.last
      FROM (SELECT job_id, max(job_seq) AS last FROM "${s}".job_events GROUP BY job_id) m
      WHERE j.job_id = m.job_id`);
    await runner.query(`ALTER TABLE "${s}".job_events ALTER COLUMN job_seq SET NOT NULL`);
    await runner.query(`DROP INDEX "${s}".job_events_job`);
    await runner.query(`CREATE UNIQUE INDEX job_events_job_seq ON "${s}".job_events (job_id, job_seq)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`DROP INDEX "${s}".job_events_job_seq`);
    await runner.query(`CREATE INDEX job_events_job ON "${s}".job_events (job_id, seq)`);
    await runner.query(`ALTER TABLE "${s}".job_events DROP COLUMN job_seq`);
    await runner.query(`ALTER TABLE "${s}".jobs DROP COLUMN last_seq`);
  }
}

/**
 * `jobs.view` as `json`, which keeps the text it was given, instead of `jsonb`: `GET /v1/jobs/{id}`
 * sends the stored text as it is (no parse into objects and serialization again per request), in
 * the key order the gateway wrote (jsonb would reorder keys by length). Nothing queries into views
 * beyond `->>`, which `json` has too.
 */
export class JobViewText1765100000000 implements MigrationInterface {
  readonly name = 'JobViewText1765100000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE "${migrationSchemaOf(runner)}".jobs ALTER COLUMN view TYPE json USING view::json`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE "${migrationSchemaOf(runner)}".jobs ALTER COLUMN view TYPE jsonb USING view::jsonb`,
    );
  }
}

/**
 * The correlation a POST started (`X-Correlation-Id`), kept with its response: a replay with the
 * same Idempotency-Key answers with the first request's correlation, the one its events carry.
 */
export class IdempotentCorrelation1796300000000 implements MigrationInterface {
  readonly name = 'IdempotentCorrelation1796300000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE "${migrationSchemaOf(runner)}".idempotency ADD COLUMN correlation_id text NULL`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "${migrationSchemaOf(runner)}".idempotency DROP COLUMN correlation_id`);
  }
}

export const gatewayMigrations = [
  GatewayTables1764480000000,
  JobEventSequence1764998400000,
  JobViewText1765100000000,
  IdempotentCorrelation1796300000000,
];
