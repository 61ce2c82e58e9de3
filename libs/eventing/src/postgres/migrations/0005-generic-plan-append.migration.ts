import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './schema';
import { setBasedAppendFunction } from './0003-set-based-append.migration';

/**
 * `append_batch` with every statement planned once per connection (`plan_cache_mode =
 * force_generic_plan`) and never with a sequential scan of `events` (`enable_seqscan = off`), both
 * set for the function's calls only; the same signature, results and guarantees as 0003's and 0004's.
 *
 * Why: measured with pgbench (one event per call, prepared), migration 0004's function spent ~30 %
 * of its Postgres CPU planning — its `EXECUTE`d reads at every call, and its cached INSERTs too,
 * for which PL/pgSQL kept choosing custom plans (re-planned at every call): 470–530 µs of Postgres
 * CPU per call against 340 µs with this one (a plain INSERT of an event and its outbox row: ~200).
 * 0004 planned the reads per call to escape a generic plan made while `events` was small, which
 * read the streams' versions with a sequential scan for as long as it stayed cached; with sequential
 * scans off the generic plan reads them through `events_pkey` whatever the table's size
 * (`append-plans.int.spec.ts`). Every statement of the function has an index or reads no table, so
 * nothing else is steered.
 */
export class GenericPlanAppend1732900000004 implements MigrationInterface {
  readonly name = 'GenericPlanAppend1732900000004';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(setBasedAppendFunction(schemaOf(runner), { planPerCall: false, genericPlans: true }));
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(setBasedAppendFunction(schemaOf(runner), { planPerCall: true }));
  }
}
