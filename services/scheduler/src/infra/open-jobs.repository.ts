import type { Causation } from '@gpunet/contracts';
import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import type { Database, Tx } from '@gpunet/eventing';
import type { FundedJob } from '../domain/placement-input';

/** A funded job still owed a decision (`open_jobs`). */
export interface OpenJob {
  readonly funded: FundedJob;
  /** When it first entered a queue, on the scheduler's clock. */
  readonly queuedSince: Date | null;
  /** Its funding's causation (correlation, and `job.funded`'s id); null for rows from before it was kept. */
  readonly fundedBy: Causation | null;
}

/** An open job whose spec is known too: one the scheduler places. */
export interface OwedJob extends OpenJob {
  /** null: a v1 job, placed from its terms. */
  readonly spec: NormalizedSpec | null;
}

interface OpenJobRow {
  funded: FundedJob;
  queued_since: Date | null;
  funded_correlation_id: string | null;
  funded_event_id: string | null;
}

const openJobOf = (row: OpenJobRow): OpenJob => ({
  funded: row.funded,
  queuedSince: row.queued_since,
  fundedBy:
    row.funded_correlation_id === null || row.funded_event_id === null
      ? null
      : { correlationId: row.funded_correlation_id, causationId: row.funded_event_id },
});

/**
 * The scheduler's own tables: `open_jobs`, the funded jobs still owed a decision (what a restart or
 * a new leader queues again), and `job_specs`, every submitted job's spec.
 */
export class OpenJobsRepository {
  constructor(private readonly db: Database) {}

  /**
   * `job.funded` and `job.submitted` of one job arrive on two consumers, in either order: each
   * handler takes this per-job lock first, so the second to commit always sees the first's row. Two
   * batches locking the same jobs in opposite orders deadlock; Postgres aborts one, and the consumer
   * applies that batch again message by message.
   */
  async lock(tx: Tx, jobId: string): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `gpunet-scheduler-job:${tx.schema}:${jobId}`,
    ]);
  }

  /** The job is owed a decision from now on (once: a redelivered funding changes nothing). */
  async recordFunded(tx: Tx, job: FundedJob, queuedSince: Date, fundedBy: Causation): Promise<void> {
    await tx.execute(
      `INSERT INTO "${tx.schema}".open_jobs (job_id, funded, queued_since, funded_correlation_id, funded_event_id)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job_id) DO NOTHING`,
      [
        job.jobId,
        JSON.stringify(job),
        queuedSince.toISOString(),
        fundedBy.correlationId,
        fundedBy.causationId,
      ],
    );
  }

  /** The job's spec, when it was submitted (`spec` null: a v1 job); undefined when not yet. */
  async specOf(tx: Tx, jobId: string): Promise<{ spec: NormalizedSpec | null } | undefined> {
    const rows = await tx.query<{ spec: NormalizedSpec | null }>(
      `SELECT spec FROM "${tx.schema}".job_specs WHERE job_id = $1`,
      [jobId],
    );
    return rows[0];
  }

  async recordSpec(tx: Tx, jobId: string, spec: NormalizedSpec | null): Promise<void> {
    await tx.execute(
      `INSERT INTO "${tx.schema}".job_specs (job_id, spec) VALUES ($1, $2) ON CONFLICT (job_id) DO NOTHING`,
      [jobId, spec === null ? null : JSON.stringify(spec)],
    );
  }

  /** The job, when it is funded and still owed a decision. */
  async openJob(tx: Tx, jobId: string): Promise<OpenJob | undefined> {
    const rows = await tx.query<OpenJobRow>(
      `SELECT funded, queued_since, funded_correlation_id, funded_event_id
         FROM "${tx.schema}".open_jobs WHERE job_id = $1`,
      [jobId],
    );
    return rows[0] && openJobOf(rows[0]);
  }

  /** The job is owed no decision any more (placed, unschedulable or cancelled). */
  async forget(tx: Tx, jobId: string): Promise<void> {
    await tx.execute(`DELETE FROM "${tx.schema}".open_jobs WHERE job_id = $1`, [jobId]);
  }

  /** Every open job whose spec is known too, in the order they were funded. */
  async owed(): Promise<OwedJob[]> {
    const s = this.db.schema;
    const rows = await this.db.query<OpenJobRow & { spec: NormalizedSpec | null }>(
      `SELECT o.funded, o.queued_since, o.funded_correlation_id, o.funded_event_id, s.spec
         FROM "${s}".open_jobs o JOIN "${s}".job_specs s USING (job_id)
        ORDER BY o.funded_at, o.job_id`,
    );
    return rows.map((row) => ({ ...openJobOf(row), spec: row.spec }));
  }

  /** The ids of the jobs still owed a decision (funded, spec known or not). */
  async openJobIds(): Promise<string[]> {
    const rows = await this.db.query<{ job_id: string }>(
      `SELECT job_id FROM "${this.db.schema}".open_jobs ORDER BY job_id`,
    );
    return rows.map((r) => r.job_id);
  }
}
