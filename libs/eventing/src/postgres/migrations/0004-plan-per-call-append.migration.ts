import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './schema';
import { setBasedAppendFunction } from './0003-set-based-append.migration';

/**
 * `append_batch` with every statement that reads `events` planned at each call (`EXECUTE`), the
 * same signature, results and guarantees as migration 0003's.
 *
 * Why: PL/pgSQL caches a statement's plan per connection and, after five calls, may keep a generic
 * plan made while the table was small. A pooled connection that appended while `events` was new
 * thus kept reading the streams' versions with a sequential scan of the whole table, on every call,
 * until something invalidated the plan (autovacuum's next ANALYZE; a minute or more). In
 * bench/eventing that scan was ~23 % of the machine's CPU (perf: `ExecScan`, `texteq`,
 * `ExecEvalScalarArrayOp` under `plpgsql_exec_function`), and in a young service every append paid
 * O(events). A statement run with `EXECUTE` is planned for its actual arguments and the table as it
 * is: an index lookup per stream. Only the statements that read `events` are planned per call
 * (forcing custom plans for the whole function costs ~5 % of the machine in planning); the inserts
 * read no table and keep their cached plans.
 */
export class PlanPerCallAppend1732900000003 implements MigrationInterface {
  readonly name = 'PlanPerCallAppend1732900000003';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(setBasedAppendFunction(schemaOf(runner), { planPerCall: true }));
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(setBasedAppendFunction(schemaOf(runner), { planPerCall: false }));
  }
}
