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
   * load one round trip (and one Postgres wake-up) serves many requests, through a prepared
   * statement. The view comes back as the JSON text stored (`json` column), ready to send.
   * One read in flight at a time: the views asked for meanwhile wait at most one round trip and go
   * together in the next — with two in flight the batches were half as large, and each query's
   * socket write (and Postgres's wake-up to answer it) was most of a GET's CPU on a shared machine
   * (bench/gateway: closed-loop capacity 4,600–5,200 → 7,000 GET/s).
   */
  private readonly views = new Batcher<{ readonly tenantId: string; readonly jobId: string }, string | null>(
    async (keys) => {
      const rows = await this.db.read<{ job_id: string; tenant_id: string; view: string }>(
        `SELECT job_id, tenant_id, view::text AS view FROM "${this.s}".jobs WHERE job_id = ANY($1::text[])`,
        [[...new Set(keys.map((k) => k.jobId))]],
        // Prepared once per pooled connection: the API's hottest statement is not parsed and
        // planned by Postgres on every call (its CPU is the gateway's on a shared machine).
        'gateway_job_views',
      );
      const byId = new Map(rows.map((r) => [r.job_id, r]));
      // Another tenant's job is not found: the tenant is checked per request.
      return keys.map((k) => {
        const row = byId.get(k.jobId);
        return row !== undefined && row.tenant_id === k.tenantId ? row.view : null;
      });
    },
    { maxBatch: 128, maxInFlight: 1 },
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
  apply(tx: Tx, envelope: Envelope): Promise<void> {
    return this.applyBatch(tx, [envelope]);
  }

  /**
   * Applies consumed events, in the order given, to their jobs — what one consumer batch holds — in
   * four statements whatever the batch's size (before: five per event, so the projections' round
   * trips, not the API's reads, were most of the gateway's Postgres traffic and CPU under load, see
   * bench/gateway). The jobs' rows are locked first, in `job_id` order (two consumers' batches that
   * share jobs cannot deadlock), then each job's new events are numbered from its `last_seq` as
   * `record` numbers one: per job, number order is commit order. Events of jobs this gateway never
   * submitted are ignored; an event already in a job's history (redelivery) takes no number and
   * changes nothing.
   */
  async applyBatch(tx: Tx, envelopes: readonly Envelope[]): Promise<void> {
    const ofJobs = envelopes.filter(
      (e): e is Envelope & { data: { jobId: string } } =>
        typeof (e.data as { jobId?: unknown }).jobId === 'string',
    );
    if (ofJobs.length === 0) return;
    const locked = await tx.query<{ job_id: string; view: JobView; last_seq: string }>(
      `SELECT job_id, view, last_seq FROM "${tx.schema}".jobs WHERE job_id = ANY($1::text[])
       ORDER BY job_id FOR UPDATE`,
      [[...new Set(ofJobs.map((e) => e.data.jobId))]],
    );
    if (locked.length === 0) return;
    const jobs = new Map(
      locked.map((r) => [
        r.job_id,
        { view: r.view, lastSeq: Number(r.last_seq), changed: false, touched: false },
      ]),
    );
    const ours = ofJobs.filter((e) => jobs.has(e.data.jobId));
    const seen = new Set(
      (
        await tx.query<{ event_id: string }>(
          `SELECT event_id FROM "${tx.schema}".job_events WHERE event_id = ANY($1::text[])`,
          [ours.map((e) => e.eventId)],
        )
      ).map((r) => r.event_id),
    );
    const history = {
      jobId: [] as string[],
      jobSeq: [] as number[],
      eventId: [] as string[],
      type: [] as string[],
      occurredAt: [] as string[],
      data: [] as string[],
    };
    for (const envelope of ours) {
      if (seen.has(envelope.eventId)) continue;
      seen.add(envelope.eventId);
      const job = jobs.get(envelope.data.jobId)!;
      job.lastSeq += 1;
      job.touched = true;
      history.jobId.push(envelope.data.jobId);
      history.jobSeq.push(job.lastSeq);
      history.eventId.push(envelope.eventId);
      history.type.push(envelope.type);
      history.occurredAt.push(envelope.occurredAt);
      history.data.push(JSON.stringify(envelope.data));
      const next = applyJobEvent(job.view, envelope);
      if (next !== job.view) {
        job.view = next;
        job.changed = true;
      }
    }
    if (history.eventId.length === 0) return;
    // The two writes go without waiting for their answers (`Tx.write`, pipelined): the consumer's
    // COMMIT follows them on the connection, and a failure of either fails the batch's transaction.
    tx.write(
      `INSERT INTO "${tx.schema}".job_events (job_id, job_seq, event_id, type, occurred_at, data)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::timestamptz[], $6::jsonb[])`,
      [history.jobId, history.jobSeq, history.eventId, history.type, history.occurredAt, history.data],
    );
    const touched = [...jobs].filter(([, job]) => job.touched);
    // A job whose view did not change keeps its status, updated_at and view (NULL: coalesce keeps them).
    tx.write(
      `UPDATE "${tx.schema}".jobs j SET last_seq = u.last_seq, status = coalesce(u.status, j.status),
         updated_at = coalesce(u.updated_at, j.updated_at), view = coalesce(u.view, j.view)
       FROM unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[], $5::json[])
         AS u(job_id, last_seq, status, updated_at, view)
       WHERE j.job_id = u.job_id`,
      [
        touched.map(([jobId]) => jobId),
        touched.map(([, job]) => job.lastSeq),
        touched.map(([, job]) => (job.changed ? job.view.status : null)),
        touched.map(([, job]) => (job.changed ? job.view.updatedAt : null)),
        touched.map(([, job]) => (job.changed ? JSON.stringify(job.view) : null)),
      ],
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

  /**
   * The tenant's job, its row locked until `tx` ends: what a cancel decides on, while no consumer
   * batch can move the job on. Undefined when the tenant has no such job.
   */
  async lockView(tx: Tx, tenantId: string, jobId: string): Promise<JobView | undefined> {
    const rows = await tx.query<{ view: JobView }>(
      `SELECT view FROM "${tx.schema}".jobs WHERE job_id = $1 AND tenant_id = $2 FOR UPDATE`,
      [jobId, tenantId],
    );
    return rows[0]?.view;
  }

  /** The job's view as `tx` sees it (after its own writes). */
  async viewIn(tx: Tx, jobId: string): Promise<JobView | undefined> {
    const rows = await tx.query<{ view: JobView }>(`SELECT view FROM "${tx.schema}".jobs WHERE job_id = $1`, [
      jobId,
    ]);
    return rows[0]?.view;
  }

  /** The job's status; undefined when this gateway has no such job. */
  async status(jobId: string): Promise<JobStatus | undefined> {
    const rows = await this.db.query<{ status: JobStatus }>(
      `SELECT status FROM "${this.s}".jobs WHERE job_id = $1`,
      [jobId],
    );
    return rows[0]?.status;
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
