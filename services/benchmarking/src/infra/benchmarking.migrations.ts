import { migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Benchmarking's projections: the claims it verifies against (from discovery's events), each
 * provider's benchmarking state and newest profile, the measured links, the fitted coordinates, and
 * the probe requests it sent (only solicited link reports are accepted).
 */
export class BenchmarkingProjections1764600000000 implements MigrationInterface {
  readonly name = 'BenchmarkingProjections1764600000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".providers (
        provider_id          text        PRIMARY KEY,
        simulated            boolean     NOT NULL,
        claim                jsonb       NOT NULL,
        addresses            jsonb       NOT NULL,
        status               text        NOT NULL CHECK (status IN ('online', 'offline', 'deregistered')),
        busy                 boolean     NOT NULL DEFAULT false,
        inventory_changed_at timestamptz,
        last_sequence        bigint      NOT NULL DEFAULT 0
      )`);
    await runner.query(`
      CREATE TABLE "${s}".benchmark_state (
        provider_id        text             PRIMARY KEY,
        pending_request_id text,
        pending_deadline   timestamptz,
        last_requested_at  timestamptz,
        reliability        double precision NOT NULL,
        mismatches         integer          NOT NULL DEFAULT 0,
        verified_runs      integer          NOT NULL DEFAULT 0,
        failed_runs        integer          NOT NULL DEFAULT 0,
        last_verified_at   timestamptz,
        last_mismatch_at   timestamptz
      )`);
    await runner.query(
      `CREATE INDEX benchmark_pending ON "${s}".benchmark_state (pending_deadline) WHERE pending_request_id IS NOT NULL`,
    );
    await runner.query(`
      CREATE TABLE "${s}".gpu_profiles (
        provider_id text        PRIMARY KEY,
        simulated   boolean     NOT NULL,
        profile     jsonb       NOT NULL,
        measured_at timestamptz NOT NULL,
        expires_at  timestamptz NOT NULL
      )`);
    await runner.query(`
      CREATE TABLE "${s}".links (
        a              text             NOT NULL,
        b              text             NOT NULL,
        rtt_us         double precision NOT NULL,
        throughput_bps double precision,
        same_site      boolean          NOT NULL,
        path           text             NOT NULL,
        measured_at    timestamptz      NOT NULL,
        expires_at     timestamptz      NOT NULL,
        PRIMARY KEY (a, b)
      )`);
    await runner.query(`CREATE INDEX links_expiry ON "${s}".links (expires_at)`);
    await runner.query(`
      CREATE TABLE "${s}".coordinates (
        host_id    text             PRIMARY KEY,
        x          double precision NOT NULL,
        y          double precision NOT NULL,
        height     double precision NOT NULL,
        error      double precision NOT NULL,
        site_id    text             NOT NULL,
        updated_at timestamptz      NOT NULL
      )`);
    await runner.query(`
      CREATE TABLE "${s}".probe_requests (
        request_id  text        PRIMARY KEY,
        prober      text        NOT NULL,
        cycle       text        NOT NULL,
        peers       text[]      NOT NULL,
        issued_at   timestamptz NOT NULL,
        outcome     text        NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'reported', 'declined', 'unanswered')),
        reported_at timestamptz
      )`);
    await runner.query(`CREATE INDEX probe_requests_cycle ON "${s}".probe_requests (cycle)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    for (const t of [
      'probe_requests',
      'coordinates',
      'links',
      'gpu_profiles',
      'benchmark_state',
      'providers',
    ])
      await runner.query(`DROP TABLE "${s}".${t}`);
  }
}

/**
 * Links from jobs' overlays: which edge holds which overlay address in a job (from
 * `job.launching`, the newest attempt's), and the path reports that arrived before their job's launch
 * (execution publishes a job's report while it prepares the overlay, before it appends the launch), one
 * per job, until the launch resolves them or they would only yield expired links.
 */
export class BenchmarkingOverlayHosts1765000000000 implements MigrationInterface {
  readonly name = 'BenchmarkingOverlayHosts1765000000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".overlay_hosts (
        job_id      text    NOT NULL,
        address     text    NOT NULL,
        provider_id text    NOT NULL,
        attempt     integer NOT NULL,
        PRIMARY KEY (job_id, address)
      )`);
    await runner.query(`
      CREATE TABLE "${s}".overlay_pending_reports (
        job_id         text        PRIMARY KEY,
        report         jsonb       NOT NULL,
        generated_at   timestamptz NOT NULL,
        expires_at     timestamptz NOT NULL,
        event_id       uuid        NOT NULL,
        correlation_id text        NOT NULL
      )`);
    await runner.query(`CREATE INDEX overlay_pending_expiry ON "${s}".overlay_pending_reports (expires_at)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    for (const t of ['overlay_pending_reports', 'overlay_hosts'])
      await runner.query(`DROP TABLE "${s}".${t}`);
  }
}

/**
 * GPU challenges: each provider's GPUs with their verification status, the challenge out (at most
 * one per provider, with the time by which it must be decided), the concluded challenges with their
 * evidence, and the jobs whose GPUs are spot-checked (from settlement's funding, the scheduler's
 * placement and execution's end, in whatever order they arrive).
 */
export class BenchmarkingChallenges1766000000000 implements MigrationInterface {
  readonly name = 'BenchmarkingChallenges1766000000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".gpu_verification (
        provider_id  text        NOT NULL,
        gpu_uuid     text        NOT NULL,
        position     integer     NOT NULL,
        status       text        NOT NULL CHECK (status IN ('pending', 'verified', 'unverified', 'simulated')),
        since        timestamptz NOT NULL,
        challenge_id text,
        PRIMARY KEY (provider_id, gpu_uuid)
      )`);
    await runner.query(`
      CREATE TABLE "${s}".challenge_state (
        provider_id          text        PRIMARY KEY,
        pending_challenge_id text,
        pending_expires_at   timestamptz,
        last_challenge_at    timestamptz
      )`);
    await runner.query(
      `CREATE INDEX challenge_pending ON "${s}".challenge_state (pending_expires_at) WHERE pending_challenge_id IS NOT NULL`,
    );
    await runner.query(`
      CREATE TABLE "${s}".challenges (
        challenge_id text        PRIMARY KEY,
        provider_id  text        NOT NULL,
        reason       text        NOT NULL,
        job_id       text,
        gpu_uuid     text        NOT NULL,
        outcome      text        NOT NULL CHECK (outcome IN ('passed', 'failed')),
        evidence     jsonb       NOT NULL,
        at           timestamptz NOT NULL,
        seq          bigserial
      )`);
    await runner.query(
      `CREATE INDEX challenges_newest ON "${s}".challenges (provider_id, at DESC, seq DESC)`,
    );
    await runner.query(`
      CREATE TABLE "${s}".challenge_jobs (
        job_id                   text             PRIMARY KEY,
        spot_checks_per_gpu_hour double precision,
        placement                jsonb,
        attempt                  integer          NOT NULL DEFAULT 0,
        ended                    boolean          NOT NULL DEFAULT false
      )`);
    await runner.query(
      `CREATE INDEX challenge_jobs_running ON "${s}".challenge_jobs (job_id) WHERE NOT ended AND placement IS NOT NULL`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    for (const t of ['challenge_jobs', 'challenges', 'challenge_state', 'gpu_verification'])
      await runner.query(`DROP TABLE "${s}".${t}`);
  }
}

export const benchmarkingMigrations = [
  BenchmarkingProjections1764600000000,
  BenchmarkingOverlayHosts1765000000000,
  BenchmarkingChallenges1766000000000,
];
