import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './schema';
import { setBasedAppendFunction } from './0003-set-based-append.migration';

/**
 * Private events and snapshots, for aggregates whose deciders record more than they publish.
 *
 * - `append_batch` as 0005's, except that an event appended without a subject gets no outbox row: a
 *   service-private event (a reservation round's answers, a rank's start reply) is stored in its
 *   aggregate's stream, in order with the published ones, and never leaves the service. Such events
 *   carry version 0, which no wire message has (`PostgresEventStore` reads them back unvalidated:
 *   the registry knows only wire messages).
 * - `snapshots`: an aggregate's state after `version` events, in the `format` its code wrote it
 *   in; a command handler reads it instead of folding the whole stream, and ignores a snapshot of
 *   another format (the state's shape changed: the stream is folded again).
 */
export class PrivateEventsSnapshots1732900000005 implements MigrationInterface {
  readonly name = 'PrivateEventsSnapshots1732900000005';

  async up(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(
      setBasedAppendFunction(s, { planPerCall: false, genericPlans: true, privateEvents: true }),
    );
    await runner.query(`
      CREATE TABLE "${s}".snapshots (
        stream_id  text        PRIMARY KEY,
        version    integer     NOT NULL CHECK (version > 0),
        format     integer     NOT NULL,
        state      jsonb       NOT NULL,
        -- the stream's correlation and its last event (event version): what a decision's events
        -- keep and are caused by when no event is read after the snapshot
        correlation_id text    NOT NULL,
        last_event_id  uuid    NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(`DROP TABLE IF EXISTS "${s}".snapshots`);
    await runner.query(setBasedAppendFunction(s, { planPerCall: false, genericPlans: true }));
  }
}
