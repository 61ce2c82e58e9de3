import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './schema';

/**
 * The event store, outbox, inbox and checkpoints of one service (ADR 0001). Every table lives in the
 * service's own schema, so services never share tables and tests isolate themselves by schema.
 */
export class EventingTables1732900000000 implements MigrationInterface {
  readonly name = 'EventingTables1732900000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".events (
        global_position bigserial NOT NULL UNIQUE,
        stream_id       text        NOT NULL,
        stream_version  integer     NOT NULL CHECK (stream_version > 0),
        event_id        uuid        NOT NULL UNIQUE,
        type            text        NOT NULL,
        version         integer     NOT NULL,
        data            jsonb       NOT NULL,
        correlation_id  text        NOT NULL,
        causation_id    text,
        trace           jsonb,
        occurred_at     timestamptz NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream_id, stream_version)
      )`);
    // The relay reads the outbox in id order; rows are deleted once JetStream acknowledged them.
    // An event's row has no body (the relay joins the event); other messages (commands) carry one.
    await runner.query(`
      CREATE TABLE "${s}".outbox (
        id          bigserial PRIMARY KEY,
        event_id    uuid        NOT NULL,
        subject     text        NOT NULL,
        body        text,
        type        text        NOT NULL,
        version     integer     NOT NULL,
        trace       jsonb,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // One row per message a consumer has applied: what makes redelivery harmless.
    await runner.query(`
      CREATE TABLE "${s}".inbox (
        consumer     text        NOT NULL,
        event_id     uuid        NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, event_id)
      )`);
    await runner.query(`
      CREATE TABLE "${s}".checkpoints (
        consumer        text        PRIMARY KEY,
        stream_sequence bigint      NOT NULL,
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    for (const table of ['checkpoints', 'inbox', 'outbox', 'events']) {
      await runner.query(`DROP TABLE IF EXISTS "${s}".${table}`);
    }
  }
}
