import type { Tx } from '@gpunet/eventing';
import type { LivenessRow } from '../domain/liveness';

/** Takes the sweep's lock for `tx`: one replica sweeps at a time; false when another holds it. */
export const lockLivenessSweep = async (tx: Tx): Promise<boolean> => {
  const [lock] = await tx.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
    [`${tx.schema}.liveness`],
  );
  return lock?.locked === true;
};

/** Providers whose status may change: online but silent since `cutoff`, or offline but heard since. */
export const livenessCandidates = async (tx: Tx, cutoff: string): Promise<LivenessRow[]> => {
  const rows = await tx.query<{
    provider_id: string;
    status: 'online' | 'offline';
    last_seen_at: Date | null;
  }>(
    `SELECT provider_id, status, last_seen_at FROM "${tx.schema}".providers
      WHERE (status = 'online' AND (last_seen_at IS NULL OR last_seen_at < $1))
         OR (status = 'offline' AND last_seen_at >= $1)`,
    [cutoff],
  );
  return rows.map((r) => ({
    providerId: r.provider_id,
    status: r.status,
    lastSeenAtMs: r.last_seen_at?.getTime() ?? null,
  }));
};
