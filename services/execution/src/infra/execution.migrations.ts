import type { MigrationInterface, QueryRunner } from 'typeorm';

const schemaOf = (runner: QueryRunner): string => {
  const schema = (runner.connection.options as { schema?: string }).schema;
  if (schema === undefined) throw new Error('the execution migrations need DataSource.options.schema');
  return schema;
};

/**
 * - `jobs`: one row per job the process manager knows; locked (`FOR UPDATE`) by every decision on
 *   the job, so decisions on one job are serial across consumers, timers and replicas; `active`
 *   until the job ended and its reservations were released (what a restarted service resumes);
 *   the state folded so far (`state` at `version`, in `state_format`), so a decision reads one row,
 *   not the whole log.
 * - `job_events`: the job aggregate's whole history (public and private events), in order; the
 *   public ones are also appended to the event store, whose outbox publishes them.
 * - `providers`: discovery's view of each edge that execution needs: its address and GPU models.
 */
export class ExecutionJobs1764480000000 implements MigrationInterface {
  readonly name = 'ExecutionJobs1764480000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(`
      CREATE TABLE "${s}".jobs (
        job_id     text        PRIMARY KEY,
        phase      text        NOT NULL DEFAULT 'new',
        active     boolean     NOT NULL DEFAULT true,
        -- the state after version events, a snapshot: folding the log gives the same
        state        jsonb,
        version      integer     NOT NULL DEFAULT 0,
        state_format integer,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX jobs_active ON "${s}".jobs (job_id) WHERE active`);
    await runner.query(`
      CREATE TABLE "${s}".job_events (
        job_id  text    NOT NULL,
        version integer NOT NULL,
        type    text    NOT NULL,
        data    jsonb   NOT NULL,
        PRIMARY KEY (job_id, version)
      )`);
    await runner.query(`
      CREATE TABLE "${s}".providers (
        provider_id text    PRIMARY KEY,
        sequence    bigint  NOT NULL,
        address     text,
        interface   text,
        gpu_models  jsonb   NOT NULL
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(`DROP TABLE "${s}".providers`);
    await runner.query(`DROP TABLE "${s}".job_events`);
    await runner.query(`DROP TABLE "${s}".jobs`);
  }
}

export const executionMigrations = [ExecutionJobs1764480000000];
