import type { BenchmarkReason } from '@gpunet/contracts';
import type { Rng } from '@gpunet/netcoord';

/** What the scheduler of benchmarks knows of one provider. Times in ms since the epoch. */
export interface ProviderScheduleView {
  readonly providerId: string;
  readonly online: boolean;
  /** A job holds its GPUs. */
  readonly busy: boolean;
  readonly inventoryChangedAtMs: number | null;
  readonly lastProfile: { readonly measuredAtMs: number; readonly expiresAtMs: number } | null;
  /** A request is out (at most one per provider). */
  readonly pending: boolean;
  readonly lastRequestedAtMs: number | null;
}

export interface BenchmarkSchedulePolicy {
  /** Renew a profile this long before it expires. */
  readonly renewBeforeMs: number;
  /** Chance per sweep that a provider with a valid profile gets an unannounced re-benchmark. */
  readonly spotCheckProbability: number;
  /** No spot check sooner than this after the last request. */
  readonly spotCheckMinIntervalMs: number;
  /** Never ask the same provider again sooner than this (a failed or declined request backs off). */
  readonly retryAfterMs: number;
  /** At most this many requests per sweep (the rest wait for the next one). */
  readonly maxPerSweep: number;
  /** Benchmark providers whose GPUs a job holds (their edge's own policy must allow it too). */
  readonly allowWhileBusy: boolean;
}

export interface DueBenchmark {
  readonly providerId: string;
  readonly reason: BenchmarkReason;
}

const PRIORITY: Record<BenchmarkReason, number> = {
  manual: 0,
  initial: 1,
  'inventory-changed': 2,
  expiring: 3,
  'spot-check': 4,
};

/**
 * Which providers to benchmark now, and why: never measured (`initial`), hardware changed since the
 * last profile (`inventory-changed`), profile about to expire (`expiring`), or — at random, so that a
 * provider cannot predict it — a `spot-check`. Offline providers, providers with a request out, those
 * asked too recently and (unless allowed) busy ones are left alone. Bounded per sweep, most urgent
 * first; deterministic for a given `rng`.
 */
export const dueBenchmarks = (
  views: readonly ProviderScheduleView[],
  nowMs: number,
  rng: Rng,
  policy: BenchmarkSchedulePolicy,
): DueBenchmark[] => {
  const due: DueBenchmark[] = [];
  for (const v of [...views].sort((a, b) => (a.providerId < b.providerId ? -1 : 1))) {
    // Draw for every provider, due or not, so one provider's state does not shift another's luck.
    const draw = rng();
    if (!v.online || v.pending || (v.busy && !policy.allowWhileBusy)) continue;
    if (v.lastRequestedAtMs !== null && nowMs - v.lastRequestedAtMs < policy.retryAfterMs) continue;
    let reason: BenchmarkReason | null = null;
    if (v.lastProfile === null) reason = 'initial';
    else if (v.inventoryChangedAtMs !== null && v.inventoryChangedAtMs > v.lastProfile.measuredAtMs)
      reason = 'inventory-changed';
    else if (v.lastProfile.expiresAtMs - nowMs <= policy.renewBeforeMs) reason = 'expiring';
    else if (
      draw < policy.spotCheckProbability &&
      (v.lastRequestedAtMs === null || nowMs - v.lastRequestedAtMs >= policy.spotCheckMinIntervalMs)
    )
      reason = 'spot-check';
    if (reason !== null) due.push({ providerId: v.providerId, reason });
  }
  return due
    .map((d, i) => ({ d, i }))
    .sort((x, y) => PRIORITY[x.d.reason] - PRIORITY[y.d.reason] || x.i - y.i)
    .slice(0, policy.maxPerSweep)
    .map((x) => x.d);
};
