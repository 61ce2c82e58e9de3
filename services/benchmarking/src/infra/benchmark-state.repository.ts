import type { Tx } from '@gpunet/eventing';
import type { ProviderScheduleView } from '../domain/benchmark-schedule';
import type { ProviderBenchmarkEvent } from '../domain/provider-benchmark.decider';
import { RELIABILITY } from '../domain/reliability';

/*
 * Each provider's benchmarking state (the request out, reliability, counts) and newest GPU profile,
 * projected from its decisions in the deciding transaction, and what a sweep reads of them.
 */

/** Applies a provider's benchmarking events to its state and profile rows. */
export const projectBenchmarkEvents = async (
  tx: Tx,
  events: readonly ProviderBenchmarkEvent[],
): Promise<void> => {
  const s = tx.schema;
  for (const event of events) {
    const id = event.data.providerId;
    await tx.execute(
      `INSERT INTO "${s}".benchmark_state (provider_id, reliability) VALUES ($1, $2) ON CONFLICT (provider_id) DO NOTHING`,
      [id, RELIABILITY.INITIAL],
    );
    switch (event.type) {
      case 'benchmark.requested':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET pending_request_id = $2, pending_deadline = $3, last_requested_at = $4
           WHERE provider_id = $1`,
          [id, event.data.requestId, event.data.deadline, event.data.at],
        );
        break;
      case 'benchmark.failed':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET pending_request_id = NULL, pending_deadline = NULL,
             failed_runs = failed_runs + $2 WHERE provider_id = $1`,
          [id, event.data.cause === 'declined' ? 0 : 1],
        );
        break;
      case 'gpu.benchmarked':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET pending_request_id = NULL, pending_deadline = NULL WHERE provider_id = $1`,
          [id],
        );
        await tx.execute(
          `INSERT INTO "${s}".gpu_profiles (provider_id, simulated, profile, measured_at, expires_at)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (provider_id) DO UPDATE SET simulated = $2, profile = $3, measured_at = $4, expires_at = $5`,
          [
            id,
            event.data.simulated,
            JSON.stringify(event.data.profile),
            event.data.profile.measuredAt,
            event.data.profile.expiresAt,
          ],
        );
        break;
      case 'provider.claim.verified':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET verified_runs = verified_runs + 1, last_verified_at = $2 WHERE provider_id = $1`,
          [id, event.data.at],
        );
        break;
      case 'provider.claim.mismatched':
        await tx.execute(
          `UPDATE "${s}".benchmark_state SET mismatches = mismatches + 1, last_mismatch_at = $2 WHERE provider_id = $1`,
          [id, event.data.at],
        );
        break;
      case 'provider.reliability-changed':
        await tx.execute(`UPDATE "${s}".benchmark_state SET reliability = $2 WHERE provider_id = $1`, [
          id,
          event.data.score,
        ]);
        break;
      case 'challenge.issued':
      case 'challenge.committed':
      case 'provider.challenged':
      case 'gpu.verification-changed':
        // Projected from the decision's state (`projectChallengeDecision`).
        break;
      default: {
        const unknown: never = event;
        throw new Error(`unprojected event ${JSON.stringify(unknown)}`);
      }
    }
  }
};

/**
 * Takes the sweep's lock for `tx`, if no other replica holds it: one sweep at a time. Returns
 * whether it was taken.
 */
export const tryLockSweep = async (tx: Tx): Promise<boolean> => {
  const [lock] = await tx.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
    [`${tx.schema}.benchmark-sweep`],
  );
  return lock?.locked === true;
};

/** The requests out whose deadline has passed at `nowIso`. */
export const overdueRequests = async (
  tx: Tx,
  nowIso: string,
): Promise<{ providerId: string; requestId: string }[]> =>
  (
    await tx.query<{ provider_id: string; pending_request_id: string }>(
      `SELECT provider_id, pending_request_id FROM "${tx.schema}".benchmark_state
        WHERE pending_request_id IS NOT NULL AND pending_deadline <= $1`,
      [nowIso],
    )
  ).map((r) => ({ providerId: r.provider_id, requestId: r.pending_request_id }));

interface ScheduleRow {
  provider_id: string;
  status: string;
  busy: boolean;
  inventory_changed_at: Date | null;
  pending_request_id: string | null;
  last_requested_at: Date | null;
  measured_at: Date | null;
  expires_at: Date | null;
}

/** What the benchmark schedule knows of every provider not deregistered. */
export const providerScheduleViews = async (tx: Tx): Promise<ProviderScheduleView[]> =>
  (
    await tx.query<ScheduleRow>(
      `SELECT p.provider_id, p.status, p.busy, p.inventory_changed_at, s.pending_request_id, s.last_requested_at,
              g.measured_at, g.expires_at
         FROM "${tx.schema}".providers p
         LEFT JOIN "${tx.schema}".benchmark_state s USING (provider_id)
         LEFT JOIN "${tx.schema}".gpu_profiles g USING (provider_id)
        WHERE p.status <> 'deregistered'`,
    )
  ).map((r) => ({
    providerId: r.provider_id,
    online: r.status === 'online',
    busy: r.busy,
    inventoryChangedAtMs: r.inventory_changed_at?.getTime() ?? null,
    lastProfile:
      r.measured_at === null || r.expires_at === null
        ? null
        : { measuredAtMs: r.measured_at.getTime(), expiresAtMs: r.expires_at.getTime() },
    pending: r.pending_request_id !== null,
    lastRequestedAtMs: r.last_requested_at?.getTime() ?? null,
  }));
