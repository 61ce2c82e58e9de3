/** A rank record as far as the reservation bookkeeping needs it. */
export interface RankSpan {
  readonly reservationId: string;
  readonly state: 'running' | 'exited';
  readonly startedAt: string;
  readonly exitedAt: string | null;
  readonly maxDurationMs: number;
}

/** How long a running rank may take to stop after its max duration (SIGTERM, grace, SIGKILL). */
export const STOP_ALLOWANCE_MS = 5 * 60_000;
/** How long a reservation stays in use after its last rank exited: execution may restart the gang on it. */
export const RESTART_WINDOW_MS = 5 * 60_000;

/**
 * Until when (ms) each reservation with ranks stays in use whatever its hold says: a started
 * reservation does not lapse at its `holdUntil`. While a rank runs: until its max duration (plus
 * the time to stop it); once all exited: a restart window after the last exit, never past the max
 * duration of the ranks it ran. Pure.
 */
export const reservationsInUseUntil = (ranks: readonly RankSpan[]): Map<string, number> => {
  const until = new Map<string, number>();
  for (const r of ranks) {
    const deadline = Date.parse(r.startedAt) + r.maxDurationMs;
    const end =
      r.state === 'running'
        ? deadline + STOP_ALLOWANCE_MS
        : Math.min(deadline, Date.parse(r.exitedAt ?? r.startedAt) + RESTART_WINDOW_MS);
    if (Number.isNaN(end)) continue;
    until.set(r.reservationId, Math.max(until.get(r.reservationId) ?? -Infinity, end));
  }
  return until;
};
