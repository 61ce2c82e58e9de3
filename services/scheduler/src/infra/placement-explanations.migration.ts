import { migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why each job's last placement attempt came out as it did (`scheduler.placement-explanation`):
 * the chosen nodes, figures and alternatives of a started round, or the reasons of a failure; its
 * status follows the job's decisions.
 */
export class SchedulerPlacementExplanations1764900000000 implements MigrationInterface {
  readonly name = 'SchedulerPlacementExplanations1764900000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".placement_explanations (
        job_id       text        PRIMARY KEY,
        status       text        NOT NULL,
        attempt      integer     NOT NULL,
        explained_at timestamptz NOT NULL,
        outcome      jsonb       NOT NULL
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "${migrationSchemaOf(runner)}".placement_explanations`);
  }
}
