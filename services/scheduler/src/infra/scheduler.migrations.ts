import { migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The jobs the scheduler owes a decision: a row per funded job, written in the `job.funded`
 * consumer's transaction and deleted in the transaction that appends `job.placed` /
 * `job.unschedulable` (or consumes `job.cancelled`). A restarted scheduler queues them again.
 */
export class SchedulerOpenJobs1764470000000 implements MigrationInterface {
  readonly name = 'SchedulerOpenJobs1764470000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".open_jobs (
        job_id    text        PRIMARY KEY,
        funded    jsonb       NOT NULL,
        funded_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "${migrationSchemaOf(runner)}".open_jobs`);
  }
}

/**
 * The spec of every submitted job (`job.submitted`; null for a v1 job), and when each open job
 * first entered the queue on the scheduler's clock. A job is queued once it is both funded and its
 * spec is known, in either order; `queued_since` keeps its maximum wait running across restarts.
 */
export class SchedulerJobSpecs1764560000000 implements MigrationInterface {
  readonly name = 'SchedulerJobSpecs1764560000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".job_specs (
        job_id       text        PRIMARY KEY,
        spec         jsonb       NULL,
        submitted_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`ALTER TABLE "${s}".open_jobs ADD COLUMN queued_since timestamptz NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`ALTER TABLE "${s}".open_jobs DROP COLUMN queued_since`);
    await runner.query(`DROP TABLE "${s}".job_specs`);
  }
}

/**
 * The causation of each open job's funding (its correlation and `job.funded`'s id), so that the
 * job's first decision carries the funding's chain even when its spec arrives second or a restart
 * queues it. Null for jobs funded before.
 */
export class SchedulerOpenJobsFundedBy1764750000000 implements MigrationInterface {
  readonly name = 'SchedulerOpenJobsFundedBy1764750000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`ALTER TABLE "${s}".open_jobs ADD COLUMN funded_correlation_id text NULL`);
    await runner.query(`ALTER TABLE "${s}".open_jobs ADD COLUMN funded_event_id text NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`ALTER TABLE "${s}".open_jobs DROP COLUMN funded_event_id`);
    await runner.query(`ALTER TABLE "${s}".open_jobs DROP COLUMN funded_correlation_id`);
  }
}

/**
 * The scheduler's projection of benchmarking's measurements, fed by its `scheduler-measurements`
 * consumer: each provider's newest GPU profile, the newest measurement of each link direction, and
 * each host's newest coordinate and same-site group. Read once per placement round for the round's
 * candidates (nothing is asked of benchmarking while placing); rows past `expires_at` are ignored.
 */
export class SchedulerMeasurements1765000000000 implements MigrationInterface {
  readonly name = 'SchedulerMeasurements1765000000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".gpu_profiles (
        provider_id text        PRIMARY KEY,
        simulated   boolean     NOT NULL,
        gpus        jsonb       NOT NULL,
        peers       jsonb       NOT NULL,
        measured_at timestamptz NOT NULL,
        expires_at  timestamptz NOT NULL
      )`);
    await runner.query(`
      CREATE TABLE "${s}".links (
        a              text             NOT NULL,
        b              text             NOT NULL,
        rtt_us         double precision NOT NULL,
        throughput_bps double precision NULL,
        same_site      boolean          NOT NULL,
        relayed        boolean          NOT NULL,
        measured_at    timestamptz      NOT NULL,
        expires_at     timestamptz      NOT NULL,
        PRIMARY KEY (a, b)
      )`);
    await runner.query(`CREATE INDEX links_b ON "${s}".links (b)`);
    await runner.query(`
      CREATE TABLE "${s}".coordinates (
        host_id    text             PRIMARY KEY,
        x          double precision NOT NULL,
        y          double precision NOT NULL,
        height     double precision NOT NULL,
        error      double precision NOT NULL,
        site_id    text             NOT NULL,
        fitted_at  timestamptz      NOT NULL,
        expires_at timestamptz      NOT NULL
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`DROP TABLE "${s}".coordinates`);
    await runner.query(`DROP TABLE "${s}".links`);
    await runner.query(`DROP TABLE "${s}".gpu_profiles`);
  }
}

/**
 * The scheduler's projection of benchmarking's trust in providers, fed by its
 * `scheduler-measurements` consumer: each provider's newest GPU verification (every GPU with its
 * status), its newest reliability score, and each GPU's newest failed challenge (what the
 * explanation quotes). Read with the measurements once per placement round.
 */
export class SchedulerTrust1765100000000 implements MigrationInterface {
  readonly name = 'SchedulerTrust1765100000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".gpu_verification (
        provider_id  text        PRIMARY KEY,
        gpus         jsonb       NOT NULL,
        cause        text        NOT NULL,
        challenge_id text        NULL,
        changed_at   timestamptz NOT NULL
      )`);
    await runner.query(`
      CREATE TABLE "${s}".provider_reliability (
        provider_id text             PRIMARY KEY,
        score       double precision NOT NULL,
        changed_at  timestamptz      NOT NULL
      )`);
    await runner.query(`
      CREATE TABLE "${s}".challenge_failures (
        gpu_uuid     text        PRIMARY KEY,
        provider_id  text        NOT NULL,
        challenge_id text        NOT NULL,
        kind         text        NOT NULL,
        failed_at    timestamptz NOT NULL
      )`);
    await runner.query(`CREATE INDEX challenge_failures_provider ON "${s}".challenge_failures (provider_id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`DROP TABLE "${s}".challenge_failures`);
    await runner.query(`DROP TABLE "${s}".provider_reliability`);
    await runner.query(`DROP TABLE "${s}".gpu_verification`);
  }
}

/**
 * The scheduler's projection of settlement's standing of providers in subnets, fed by its
 * `scheduler-subnet-standing` consumer: per (subnet, provider) the last
 * `subnet.member-standing-changed` in the SETTLEMENT stream's order (`seq`). Read once per placement
 * round for the round's candidates in the job's subnet; a provider without a row is not a member.
 */
export class SchedulerSubnetStanding1765200000000 implements MigrationInterface {
  readonly name = 'SchedulerSubnetStanding1765200000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".subnet_standing (
        subnet_id    text        NOT NULL,
        provider_id  text        NOT NULL,
        standing     text        NOT NULL,
        stake        numeric     NOT NULL,
        min_stake    numeric     NOT NULL,
        jailed_until timestamptz NULL,
        changed_at   timestamptz NOT NULL,
        seq          bigint      NOT NULL,
        PRIMARY KEY (subnet_id, provider_id)
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "${migrationSchemaOf(runner)}".subnet_standing`);
  }
}

export const schedulerMigrations = [
  SchedulerOpenJobs1764470000000,
  SchedulerJobSpecs1764560000000,
  SchedulerOpenJobsFundedBy1764750000000,
  SchedulerMeasurements1765000000000,
  SchedulerTrust1765100000000,
  SchedulerSubnetStanding1765200000000,
];
