import type { Database, Tx } from '@gpunet/eventing';

/**
 * `jobs`: where each job the process manager decided on stands — its phase, and whether it is
 * still active (not ended and released): what a restarted service resumes. The job's history and
 * state live in its stream (`job-<jobId>`); this row is written in the same transaction as each
 * decision.
 */
export class JobsRepository {
  constructor(private readonly db: Database) {}

  /** Records, in the decision's transaction, where the job stands after it. */
  async record(tx: Tx, jobId: string, phase: string, active: boolean): Promise<void> {
    await tx.execute(
      `INSERT INTO "${tx.schema}".jobs (job_id, phase, active) VALUES ($1, $2, $3)
       ON CONFLICT (job_id) DO UPDATE SET phase = excluded.phase, active = excluded.active, updated_at = now()`,
      [jobId, phase, active],
    );
  }

  /** The jobs still active, in id order. */
  async activeJobIds(): Promise<string[]> {
    const rows = await this.db.query<{ job_id: string }>(
      `SELECT job_id FROM "${this.db.schema}".jobs WHERE active ORDER BY job_id`,
    );
    return rows.map((r) => r.job_id);
  }
}
