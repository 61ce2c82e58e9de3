import { foldEvents, newEventId, streamIdOf } from '@gpunet/contracts';
import { PRIVATE_EVENT_VERSION, migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  type ExecutionEvent,
  type ExecutionState,
  jobExecutionDecider,
  STATE_CARRIED_OVER,
} from '../domain/job-execution.decider';

/** The first layout's job log. */
const jobEventsTable = (s: string): string => `
  CREATE TABLE "${s}".job_events (
    job_id  text    NOT NULL,
    version integer NOT NULL,
    type    text    NOT NULL,
    data    jsonb   NOT NULL,
    PRIMARY KEY (job_id, version)
  )`;

/**
 * The first layout (the next migration replaces the job log and the snapshot):
 *
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
    const s = migrationSchemaOf(runner);
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
    await runner.query(jobEventsTable(s));
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
    const s = migrationSchemaOf(runner);
    await runner.query(`DROP TABLE "${s}".providers`);
    await runner.query(`DROP TABLE "${s}".job_events`);
    await runner.query(`DROP TABLE "${s}".jobs`);
  }
}

/** The names the first layout stored two private events under (renamed since: past tense). */
const RENAMED: Readonly<Record<string, ExecutionEvent['type']>> = {
  'execution.rank-progress': 'execution.rank-seen',
  'execution.stopping': 'execution.stop-ordered',
};

/** `jobs.state`'s format in the first layout. */
const FIRST_STATE_FORMAT = 1;

interface FirstLayoutJob {
  readonly job_id: string;
  readonly state: ExecutionState | null;
  readonly state_format: number | null;
  readonly log: { type: string; data: unknown }[];
  readonly last_version: number | null;
  readonly last_correlation: string | null;
}

/**
 * A job's whole history moves into its stream of the event store (`job-<jobId>`), where the
 * command handler keeps it (its private events beside the public ones, its snapshots, its lock):
 * `job_events` and the snapshot columns of `jobs` go; `jobs` keeps `phase` and `active`.
 *
 * The streams held only the public events so far, so what each job had decided is carried over as
 * one private event at the end of its stream, `execution.state-carried-over`, holding the state
 * `jobs.state` held (or, where it held none in its format, the fold of `job_events`): folding the
 * stream gives that state, so a running job goes on where it was after the upgrade, and a finished
 * one still knows its placement (a late placement is still released). Nothing is asked of the
 * operator. Jobs that never decided anything have nothing to carry.
 */
export class ExecutionJobStreams1764480000001 implements MigrationInterface {
  readonly name = 'ExecutionJobStreams1764480000001';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    const jobs = (await runner.query(`
      SELECT j.job_id, j.state, j.state_format,
             (SELECT coalesce(json_agg(json_build_object('type', e.type, 'data', e.data) ORDER BY e.version), '[]')
                FROM "${s}".job_events e WHERE e.job_id = j.job_id) AS log,
             last.stream_version AS last_version, last.correlation_id AS last_correlation
        FROM "${s}".jobs j
        LEFT JOIN LATERAL (
          SELECT stream_version, correlation_id FROM "${s}".events
           WHERE stream_id = 'job-' || j.job_id ORDER BY stream_version DESC LIMIT 1
        ) last ON true
       ORDER BY j.job_id`)) as FirstLayoutJob[];
    const decider = jobExecutionDecider({
      barrierMs: 0,
      heartbeatTimeoutMs: 0,
      usageReportMs: 0,
      stopWaitMs: 0,
    });
    // The carrying over is the cause of every event it appends.
    const carry = newEventId();
    const carried = jobs.flatMap((job) => {
      const state =
        job.state !== null && job.state_format === FIRST_STATE_FORMAT
          ? job.state
          : job.log.length > 0
            ? foldEvents(
                decider,
                job.log.map((e) => ({ type: RENAMED[e.type] ?? e.type, data: e.data }) as ExecutionEvent),
              )
            : null;
      if (state === null) return [];
      return [
        {
          streamId: streamIdOf('job', job.job_id),
          version: (job.last_version ?? 0) + 1,
          data: JSON.stringify({ state }),
          // The first layout correlated a job's events by its id.
          correlationId: job.last_correlation ?? job.job_id,
        },
      ];
    });
    if (carried.length > 0)
      await runner.query(
        `INSERT INTO "${s}".events
           (stream_id, stream_version, event_id, type, version, data, correlation_id, causation_id, occurred_at)
         SELECT c.stream_id, c.version, c.event_id, $5, $6, c.data, c.correlation_id, $7, now()
           FROM unnest($1::text[], $2::int[], $3::uuid[], $4::jsonb[], $8::text[])
                AS c(stream_id, version, event_id, data, correlation_id)`,
        [
          carried.map((c) => c.streamId),
          carried.map((c) => c.version),
          carried.map(() => newEventId()),
          carried.map((c) => c.data),
          STATE_CARRIED_OVER,
          PRIVATE_EVENT_VERSION,
          carry,
          carried.map((c) => c.correlationId),
        ],
      );
    await runner.query(`DROP TABLE "${s}".job_events`);
    await runner.query(
      `ALTER TABLE "${s}".jobs DROP COLUMN state, DROP COLUMN version, DROP COLUMN state_format`,
    );
  }

  /** The first layout's tables again, empty: the history stays in the streams, which it cannot read. */
  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(
      `ALTER TABLE "${s}".jobs ADD COLUMN state jsonb, ADD COLUMN version integer NOT NULL DEFAULT 0,
         ADD COLUMN state_format integer`,
    );
    await runner.query(jobEventsTable(s));
  }
}

export const executionMigrations = [ExecutionJobs1764480000000, ExecutionJobStreams1764480000001];
