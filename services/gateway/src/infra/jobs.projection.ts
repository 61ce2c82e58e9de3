import type { Envelope } from '@gpunet/contracts';
import { Batcher, type Database, type Tx } from '@gpunet/eventing';
import { applyJobEvent, type JobStatus, type JobView, TERMINAL_STATUSES } from '../domain/job-view';

/** A row of a job's history, as SSE sends it. */
export interface JobHistoryEntry {
  readonly seq: number;
  readonly eventId: string;
  readonly type: string;
  readonly occurredAt: string;
  readonly data: unknown;
}

interface HistoryRow {
  seq: string;
  event_id: string;
  type: string;
  occurred_at: Date;
  data: unknown;
}

const toEntry = (r: HistoryRow): JobHistoryEntry => ({
  seq: Number(r.seq),
  eventId: r.event_id,
  type: r.type,
  occurredAt: r.occurred_at.toISOString(),
  data: r.data,
});

export interface JobPage {
  readonly items: readonly JobView[];
  readonly nextCursor: string | null;
}

/**
 * The jobs read model in Postgres. Every write happens in the caller's transaction (the submit's,
 * or a consumer batch's together with its inbox and checkpoint), so a job's row and history never
 * disagree with what was consumed. Every read is by tenant: another tenant's job does not exist.
 */
export class JobsProjection {
  /**
   * `GET /v1/jobs/{id}`, the API's hottest read, coalesced: the views asked for while earlier reads
   * are in flight are read by the next single query, straight on the pool (`Database.read`) — under
   * load one round trip (and one Postgres wake-up) serves many requests. The view comes back as the
   * JSON text stored (`json` column), ready to send.
   */
  private readonly views = new Batcher<{ readonly tenantId: string; readonly jobId: string }, string | null>(
    async (keys) => {
      const rows = await this.db.read<{ job_id: string; tenant_id: string; view: string }>(
        `SELECT job_id, tenant_id, view::text AS view FROM "${this.s}".jobs WHERE job_id = ANY($1::text[])`,
        [[...new Set(keys.map((k) => k.jobId))]],
      );
      const byId = new Map(rows.map((r) => [r.job_id, r]));
      // Another tenant's job is not found: the tenant is checked per request.
      return keys.map((k) => {
        const row = byId.get(k.jobId);
        return row !== undefined && row.tenant_id === k.tenantId ? row.view : null;
      });
    },
    { maxBatch: 128, maxInFlight: 2 },
  );

  constructor(private readonly db: Database) {}

  private get s(): string {
    return this.db.schema;
  }

  async insertSubmitted(tx: Tx, view: JobView, spec: unknown, envelope: Envelope): Promise<void> {
    await tx.execute(
      `INSERT INTO "${tx.schema}".jobs (job_id, tenant_id, status, submitted_at, updated_at, view, spec)
       VALUES ($1, $2, $3, $4, $4, $5, $6)`,
      [view.jobId, view.tenantId, view.status, view.submittedAt, JSON.stringify(view), JSON.stringify(spec)],
    );
    await this.record(tx, envelope);
  }

  /** Applies a consumed event to its job; events of jobs this gateway never submitted are ignored. */
  async apply(tx: Tx, envelope: Envelope): Promise<void> {
    const jobId = (envelope.data as { jobId?: unknown }).jobId;
    if (typeof jobId !== 'string') return;
    const rows = await tx.query<{ view: JobView }>(
      `SELECT view FROM "${tx.schema}".jobs WHERE job_id = $1 FOR UPDATE`,
      [jobId],
    );
    const current = rows[0]?.view;
    if (current === undefined) return;
    const inserted = await this.record(tx, envelope);
    if (!inserted) return;
    const next = applyJobEvent(current, envelope);
    if (next === current) return;
    await tx.execute(
      `UPDATE "${tx.schema}".jobs SET status = $2, updated_at = $3, view = $4 WHERE job_id = $1`,
      [jobId, next.status, next.updatedAt, JSON.stringify(next)],
    );
  }

  /**
   * Adds the event to its job's history under the job's next `job_seq`. The UPDATE of
   * `jobs.last_seq` locks the job's row until the transaction ends, so of two transactions writing
   * the same job the second waits, numbers after the first and commits after it: per job, number
   * order is commit order, and a reader that has seen `job_seq` n has seen every event below n.
   * A duplicate (redelivery) is recognised first and takes no number.
   */
  private async record(tx: Tx, envelope: Envelope): Promise<boolean> {
    const jobId = (envelope.data as { jobId: string }).jobId;
    const seen = await tx.query(`SELECT 1 FROM "${tx.schema}".job_events WHERE event_id = $1`, [
      envelope.eventId,
    ]);
    if (seen.length > 0) return false;
    const next = await tx.query<{ last_seq: string }>(
      `UPDATE "${tx.schema}".jobs SET last_seq = last_seq + 1 WHERE job_id = $1 RETURNING last_seq`,
      [jobId],
    );
    const jobSeq = next[0]?.last_seq;
    if (jobSeq === undefined) return false;
    const n = await tx.execute(
      `INSERT INTO "${tx.schema}".job_events (job_id, job_seq, event_id, type, occurred_at, data)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING`,
      [jobId, jobSeq, envelope.eventId, envelope.type, envelope.occurredAt, JSON.stringify(envelope.data)],
    );
    return n > 0;
  }

  /** A tenant's job as `GET /v1/jobs/{id}` sends it (JSON text); null when it has none of that id. */
  getJson(tenantId: string, jobId: string): Promise<string | null> {
    return this.views.submit({ tenantId, jobId });
  }

  async get(tenantId: string, jobId: string): Promise<JobView | null> {
    const json = await this.getJson(tenantId, jobId);
    return json === null ? null : (JSON.parse(json) as JobView);
  }

  async getSpec(tenantId: string, jobId: string): Promise<unknown> {
    const rows = await this.db.query<{ spec: unknown }>(
      `SELECT spec FROM "${this.s}".jobs WHERE job_id = $1 AND tenant_id = $2`,
      [jobId, tenantId],
    );
    return rows[0]?.spec ?? null;
  }

  /**
   * A tenant's jobs, newest first, a page at a time. The cursor is the last row's
   * (submitted_at, job_id), opaque to clients.
   */
  async list(
    tenantId: string,
    filter: { status?: readonly JobStatus[]; subnetId?: string; limit: number; cursor?: string },
  ): Promise<JobPage> {
    const params: unknown[] = [tenantId];
    const where = ['tenant_id = $1'];
    if (filter.status && filter.status.length > 0) {
      params.push(filter.status);
      where.push(`status = ANY($${params.length})`);
    }
    if (filter.subnetId !== undefined) {
      params.push(filter.subnetId);
      where.push(`view->>'subnetId' = $${params.length}`);
    }
    const after = filter.cursor === undefined ? null : decodeCursor(filter.cursor);
    if (after) {
      params.push(after.submittedAt, after.jobId);
      where.push(`(submitted_at, job_id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(filter.limit + 1);
    const rows = await this.db.query<{ view: JobView; submitted_at: Date; job_id: string }>(
      `SELECT view, submitted_at, job_id FROM "${this.s}".jobs WHERE ${where.join(' AND ')}
       ORDER BY submitted_at DESC, job_id DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    return {
      items: page.map((r) => r.view),
      nextCursor:
        rows.length > filter.limit && last
          ? encodeCursor(last.submitted_at.toISOString(), last.job_id)
          : null,
    };
  }

  /**
   * The job's history after its `afterSeq`-th event, oldest first (at most `limit`). The cursor is
   * the per-job `job_seq` (see `record`), never the table's global `seq`.
   */
  async history(jobId: string, afterSeq: number, limit = 500): Promise<JobHistoryEntry[]> {
    const rows = await this.db.query<HistoryRow>(
      `SELECT job_seq AS seq, event_id, type, occurred_at, data FROM "${this.s}".job_events
       WHERE job_id = $1 AND job_seq > $2 ORDER BY job_seq LIMIT $3`,
      [jobId, afterSeq, limit],
    );
    return rows.map(toEntry);
  }
}

export const isTerminal = (status: JobStatus): boolean => TERMINAL_STATUSES.has(status);

const encodeCursor = (submittedAt: string, jobId: string): string =>
  Buffer.from(JSON.stringify([submittedAt, jobId])).toString('base64url');

/** The cursor's position, or null when it is not one this gateway issued. */
export const decodeCursor = (cursor: string): { submittedAt: string; jobId: string } | null => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string' &&
      !Number.isNaN(Date.parse(parsed[0]))
    )
      return { submittedAt: parsed[0], jobId: parsed[1] };
  } catch {
    // not base64 JSON: not ours
  }
  return null;
};
