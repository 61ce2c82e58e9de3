import { UNREPORTED_ISOLATION } from '@gpunet/contracts';
import { migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The inventory projection: one row per provider (its reported facts, policy and liveness) and one
 * per GPU (its attributes, whether it is shared, reserved and offered). `gpus.available` is kept
 * denormalized (provider online ∧ shared ∧ whole ∧ unreserved). The candidate query is answered
 * from an in-memory mirror of these tables (`CandidateCache`), re-read per changed provider.
 */
export class DiscoveryProjection1764460000000 implements MigrationInterface {
  readonly name = 'DiscoveryProjection1764460000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".providers (
        provider_id       text        PRIMARY KEY,
        public_key        text        NOT NULL,
        name              text        NOT NULL,
        agent_version     text        NOT NULL,
        status            text        NOT NULL CHECK (status IN ('online', 'offline', 'deregistered')),
        simulated         boolean     NOT NULL,
        registered_at     timestamptz NOT NULL,
        status_changed_at timestamptz NOT NULL,
        last_seen_at      timestamptz,
        cpu_architecture  text        NOT NULL,
        cpu_millicores    integer     NOT NULL,
        memory_bytes      bigint      NOT NULL,
        max_gpus_per_job  integer     NOT NULL,
        max_job_ms        bigint,
        images            text[]      NOT NULL,
        subnets           text[]      NOT NULL,
        asset             text        NOT NULL,
        continent         text,
        country           text,
        city              text,
        availability      jsonb,
        host              jsonb       NOT NULL,
        inventory         jsonb       NOT NULL,
        policy            jsonb       NOT NULL,
        reservations      jsonb       NOT NULL DEFAULT '[]',
        stream_version    integer     NOT NULL
      )`);
    await runner.query(`CREATE INDEX providers_liveness ON "${s}".providers (status, last_seen_at)`);
    await runner.query(`
      CREATE TABLE "${s}".gpus (
        provider_id      text     NOT NULL REFERENCES "${s}".providers ON DELETE CASCADE,
        uuid             text     NOT NULL,
        idx              integer  NOT NULL,
        vendor           text     NOT NULL,
        model            text     NOT NULL,
        model_words      text     NOT NULL,
        vram_bytes       bigint   NOT NULL,
        compute_cap      integer,
        cuda_version     text,
        rocm_version     text,
        architecture     text,
        pci_bus_id       text,
        mig              boolean  NOT NULL,
        shared           boolean  NOT NULL,
        reserved_by      text,
        price_floor      numeric(40, 0),
        direct_peers     integer[] NOT NULL,
        available        boolean  NOT NULL,
        PRIMARY KEY (provider_id, uuid)
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`DROP TABLE "${s}".gpus`);
    await runner.query(`DROP TABLE "${s}".providers`);
  }
}

/**
 * The isolation each edge runs ranks with (ADR 0072), as columns the candidate rows read: the
 * level and the line saying what it rests on, from the host's `isolation` (the reported `host`
 * keeps it too). Rows of edges that reported none take `UNREPORTED_ISOLATION`: host processes.
 */
export class DiscoveryProviderIsolation1796400000000 implements MigrationInterface {
  readonly name = 'DiscoveryProviderIsolation1796400000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      ALTER TABLE "${s}".providers
        ADD COLUMN isolation        text CHECK (isolation IN ('host-process', 'container', 'container-userns', 'gvisor')),
        ADD COLUMN isolation_detail text`);
    await runner.query(
      `UPDATE "${s}".providers SET isolation = coalesce(host->'isolation'->>'level', $1),
         isolation_detail = coalesce(host->'isolation'->>'detail', $2)`,
      [UNREPORTED_ISOLATION.level, UNREPORTED_ISOLATION.detail],
    );
    await runner.query(`
      ALTER TABLE "${s}".providers
        ALTER COLUMN isolation SET NOT NULL,
        ALTER COLUMN isolation_detail SET NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`ALTER TABLE "${s}".providers DROP COLUMN isolation_detail, DROP COLUMN isolation`);
  }
}

export const discoveryMigrations = [
  DiscoveryProjection1764460000000,
  DiscoveryProviderIsolation1796400000000,
];
