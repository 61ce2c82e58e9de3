import type { MigrationInterface, QueryRunner } from 'typeorm';

const schemaOf = (runner: QueryRunner): string => {
  const schema = (runner.connection.options as { schema?: string }).schema;
  if (schema === undefined) throw new Error('the scheduler migrations need DataSource.options.schema');
  return schema;
};

/**
 * The jobs the scheduler owes a decision: a row per funded job, written in the `job.funded`
 * consumer's transaction and deleted in the transaction that appends `job.placed` /
 * `job.unschedulable` (or consumes `job.cancelled`). A restarted scheduler queues them again.
 */
export class SchedulerOpenJobs1764470000000 implements MigrationInterface {
  readonly name = 'SchedulerOpenJobs1764470000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".open_jobs (
        job_id    text        PRIMARY KEY,
        funded    jsonb       NOT NULL,
        funded_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "${schemaOf(runner)}".open_jobs`);
  }
}

export const schedulerMigrations = [SchedulerOpenJobs1764470000000];
