import type { PlacementExplanationRecord } from '@gpunet/contracts';
import type { Database, Tx } from '@gpunet/eventing';
import type { ExplanationWrite } from '../domain/placement-explanation';

interface ExplanationRow {
  job_id: string;
  status: PlacementExplanationRecord['status'];
  attempt: number;
  explained_at: Date;
  outcome: PlacementExplanationRecord['outcome'];
}

/**
 * `placement_explanations`: per job, why its last placement attempt came out as it did — a read
 * model of the job's decisions, written in the transaction of the decision it explains.
 */
export class PlacementExplanationsRepository {
  constructor(private readonly db: Database) {}

  async write(tx: Tx, jobId: string, write: ExplanationWrite): Promise<void> {
    if (write.kind === 'status') {
      await tx.execute(`UPDATE "${tx.schema}".placement_explanations SET status = $2 WHERE job_id = $1`, [
        jobId,
        write.status,
      ]);
      return;
    }
    await tx.execute(
      `INSERT INTO "${tx.schema}".placement_explanations (job_id, status, attempt, explained_at, outcome)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (job_id) DO UPDATE SET status = $2, attempt = $3, explained_at = $4, outcome = $5`,
      [jobId, write.status, write.attempt, write.explainedAt, JSON.stringify(write.outcome)],
    );
  }

  async find(jobId: string): Promise<PlacementExplanationRecord | null> {
    const rows = await this.db.query<ExplanationRow>(
      `SELECT job_id, status, attempt, explained_at, outcome
         FROM "${this.db.schema}".placement_explanations WHERE job_id = $1`,
      [jobId],
    );
    const row = rows[0];
    if (row === undefined) return null;
    return {
      jobId: row.job_id,
      status: row.status,
      attempt: row.attempt,
      explainedAt: row.explained_at.toISOString(),
      outcome: row.outcome,
    };
  }
}
