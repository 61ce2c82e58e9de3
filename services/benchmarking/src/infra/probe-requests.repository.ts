import type { Tx } from '@gpunet/eventing';
import type { Sql } from './sql';

/*
 * The probe requests benchmarking sent to edges: a link report is accepted only for one of them,
 * from its prober, for the peers it named, and only once.
 */

export interface IssuedProbeRequest {
  readonly requestId: string;
  readonly prober: string;
  readonly peers: readonly string[];
}

/** Records a round's requests (pending) before they are sent, so that no report can precede them. */
export const recordProbeRequests = async (
  tx: Tx,
  cycle: string,
  requests: readonly IssuedProbeRequest[],
  issuedAtIso: string,
): Promise<void> => {
  for (const q of requests)
    await tx.execute(
      `INSERT INTO "${tx.schema}".probe_requests (request_id, prober, cycle, peers, issued_at) VALUES ($1, $2, $3, $4, $5)`,
      [q.requestId, q.prober, cycle, q.peers, issuedAtIso],
    );
};

/**
 * Marks the request reported, if `prober` was asked it and has not reported it yet (a late report,
 * after the edge seemed not to answer, still counts). Returns the peers it was asked to probe, or
 * null: nobody asked for this report.
 */
export const markProbeReported = async (
  tx: Tx,
  requestId: string,
  prober: string,
  atIso: string,
): Promise<string[] | null> => {
  const [request] = await tx.query<{ peers: string[] }>(
    `UPDATE "${tx.schema}".probe_requests SET outcome = 'reported', reported_at = $3
      WHERE request_id = $1 AND prober = $2 AND outcome IN ('pending', 'unanswered') RETURNING peers`,
    [requestId, prober, atIso],
  );
  return request?.peers ?? null;
};

/** The edge's answer to a request it will not report on (unless it was reported meanwhile). */
export const markProbeUnreported = async (
  sql: Sql,
  requestId: string,
  outcome: 'declined' | 'unanswered',
): Promise<void> => {
  await sql.execute(
    `UPDATE "${sql.schema}".probe_requests SET outcome = $2 WHERE request_id = $1 AND outcome = 'pending'`,
    [requestId, outcome],
  );
};

/** How many of `requestIds` are still waiting for their report. */
export const pendingProbeCount = async (sql: Sql, requestIds: readonly string[]): Promise<number> => {
  const [row] = await sql.query<{ open: number }>(
    `SELECT count(*)::int AS open FROM "${sql.schema}".probe_requests
      WHERE request_id = ANY($1) AND outcome = 'pending'`,
    [requestIds],
  );
  return row?.open ?? 0;
};

/** A cycle's requests that were reported, and those that never were (pending or unanswered). */
export const probeCycleOutcomes = async (
  sql: Sql,
  cycle: string,
): Promise<{ reported: number; unanswered: number }> => {
  const [counts] = await sql.query<{ reported: number; unanswered: number }>(
    `SELECT count(*) FILTER (WHERE outcome = 'reported')::int AS reported,
            count(*) FILTER (WHERE outcome IN ('pending', 'unanswered'))::int AS unanswered
       FROM "${sql.schema}".probe_requests WHERE cycle = $1`,
    [cycle],
  );
  return { reported: counts?.reported ?? 0, unanswered: counts?.unanswered ?? 0 };
};
