import type { Causation, JobPathReport } from '@gpunet/contracts';
import type { Tx } from '@gpunet/eventing';

/**
 * Serialises the transactions that touch one job's overlay hosts and pending report, until commit:
 * without it a report and its launch handled at once (two replicas) could each miss the other — the
 * report finding no hosts and the launch no report — and the report would wait for nothing.
 */
export const lockOverlayJob = async (tx: Tx, jobId: string): Promise<void> => {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${tx.schema}.overlay.${jobId}`]);
};

/**
 * Makes `hosts` the job's overlay hosts for `attempt`, unless a later attempt's are already there
 * (a launch applied late). Returns whether they were written.
 */
export const replaceOverlayHosts = async (
  tx: Tx,
  jobId: string,
  attempt: number,
  hosts: ReadonlyMap<string, string>,
): Promise<boolean> => {
  const s = tx.schema;
  const [newest] = await tx.query<{ attempt: number | null }>(
    `SELECT max(attempt) AS attempt FROM "${s}".overlay_hosts WHERE job_id = $1`,
    [jobId],
  );
  if (newest?.attempt != null && newest.attempt > attempt) return false;
  await tx.execute(`DELETE FROM "${s}".overlay_hosts WHERE job_id = $1`, [jobId]);
  await tx.execute(
    `INSERT INTO "${s}".overlay_hosts (job_id, address, provider_id, attempt)
     SELECT $1, address, provider_id, $4 FROM unnest($2::text[], $3::text[]) AS h(address, provider_id)`,
    [jobId, [...hosts.keys()], [...hosts.values()], attempt],
  );
  return true;
};

/** The job's overlay hosts (address → edge id); empty before its launch. */
export const loadOverlayHosts = async (tx: Tx, jobId: string): Promise<Map<string, string>> =>
  new Map(
    (
      await tx.query<{ address: string; provider_id: string }>(
        `SELECT address, provider_id FROM "${tx.schema}".overlay_hosts WHERE job_id = $1`,
        [jobId],
      )
    ).map((r) => [r.address, r.provider_id]),
  );

/** A path report held until its job's launch, with what its links will be caused by. */
export interface PendingPathReport {
  readonly report: JobPathReport;
  readonly cause: Causation;
}

/**
 * Holds a report whose job has no hosts yet (one per job: a newer report replaces an older one, as
 * its links would anyway), until `expiresAt` — when its links would be born expired.
 */
export const holdPathReport = async (
  tx: Tx,
  report: JobPathReport,
  cause: Causation,
  expiresAt: string,
): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".overlay_pending_reports
       (job_id, report, generated_at, expires_at, event_id, correlation_id)
     VALUES ($1, $2::jsonb, $3, $4, $5, $6)
     ON CONFLICT (job_id) DO UPDATE SET report = $2::jsonb, generated_at = $3, expires_at = $4,
       event_id = $5, correlation_id = $6
     WHERE overlay_pending_reports.generated_at <= $3`,
    [
      report.jobId,
      JSON.stringify(report),
      report.generatedAt,
      expiresAt,
      cause.causationId,
      cause.correlationId,
    ],
  );
};

/** Removes and returns the job's held report, if any. */
export const takePathReport = async (tx: Tx, jobId: string): Promise<PendingPathReport | null> => {
  const [row] = await tx.query<{ report: JobPathReport; event_id: string; correlation_id: string }>(
    `DELETE FROM "${tx.schema}".overlay_pending_reports WHERE job_id = $1
     RETURNING report, event_id, correlation_id`,
    [jobId],
  );
  return row
    ? { report: row.report, cause: { correlationId: row.correlation_id, causationId: row.event_id } }
    : null;
};

/** Drops held reports whose links would be expired by now: their launch never came. */
export const dropExpiredPathReports = (tx: Tx, nowIso: string): Promise<number> =>
  tx.execute(`DELETE FROM "${tx.schema}".overlay_pending_reports WHERE expires_at <= $1`, [nowIso]);

/** Forgets an ended job's overlay: its hosts and any report it held. */
export const forgetOverlayJob = async (tx: Tx, jobId: string): Promise<void> => {
  await tx.execute(`DELETE FROM "${tx.schema}".overlay_hosts WHERE job_id = $1`, [jobId]);
  await tx.execute(`DELETE FROM "${tx.schema}".overlay_pending_reports WHERE job_id = $1`, [jobId]);
};
