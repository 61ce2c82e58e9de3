import { type LaunchedRank, modelMatches } from '@gpunet/contracts';
import type { z } from 'zod';
import type { FaultKindSchema, ProviderFaultSchema, ProviderUsageSchema } from '@gpunet/contracts';

export type ProviderUsage = z.infer<typeof ProviderUsageSchema>;
export type ProviderFault = z.infer<typeof ProviderFaultSchema>;

/** A GPU model as a GPU class token (`NVIDIA H100 80GB HBM3` → `NVIDIA-H100-80GB-HBM3`). */
export const sanitizeGpuClass = (model: string): string => {
  const token = model
    .trim()
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return token === '' ? 'unknown' : token;
};

/**
 * The class a node's GPUs are billed as: the first of the job's classes whose words name the GPU
 * model (settlement prices by class), else the model itself as a class token; `unknown` when
 * discovery never told us the model (or the node is CPU-only).
 */
export const gpuClassOf = (model: string | null, jobClasses: readonly string[]): string => {
  // The scheduler placed the job on a GPU of one of its classes: without a model, bill the first.
  if (model === null) return jobClasses[0] ?? 'unknown';
  return jobClasses.find((c) => modelMatches(model, c)) ?? sanitizeGpuClass(model);
};

/** Wall seconds each (attempt, rank) has run. Keyed `attempt:rank`. */
export type WallMeter = Readonly<Record<string, number>>;

export const meterKey = (attempt: number, rank: number): string => `${attempt}:${rank}`;

/**
 * Cumulative usage per provider: Σ GPUs × reported wall seconds over every rank of every attempt
 * that ran there. Only what ranks actually ran counts (a rank that never started has no reading);
 * readings only grow, so the sum does too. Providers without any GPU of the job are left out
 * (the contract counts at least one GPU per provider). `agreedPricePerGpuHour`: an auction job's
 * clearing price (`job.placed` `auction`), carried by every provider's reading so that settlement
 * charges it; absent for a fixed-price job (settlement applies the subnet's price table).
 */
export const usageOf = (
  ranks: readonly LaunchedRank[],
  attempts: number,
  meter: WallMeter,
  agreedPricePerGpuHour?: string,
): ProviderUsage[] => {
  const byProvider = new Map<string, { gpuClass: string; gpus: Set<string>; gpuSeconds: number }>();
  for (const rank of ranks) {
    const entry = byProvider.get(rank.providerId) ?? {
      gpuClass: rank.gpuClass,
      gpus: new Set<string>(),
      gpuSeconds: 0,
    };
    for (const uuid of rank.gpuUuids) entry.gpus.add(uuid);
    for (let attempt = 1; attempt <= attempts; attempt++)
      entry.gpuSeconds += rank.gpuUuids.length * (meter[meterKey(attempt, rank.rank)] ?? 0);
    byProvider.set(rank.providerId, entry);
  }
  return [...byProvider.entries()]
    .filter(([, e]) => e.gpus.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([providerId, e]) => ({
      providerId,
      gpuClass: e.gpuClass,
      gpus: e.gpus.size,
      // Whole seconds, rounded down: a provider is never paid for time it did not run.
      gpuSeconds: Math.floor(e.gpuSeconds + 1e-9),
      ...(agreedPricePerGpuHour === undefined ? {} : { agreedPricePerGpuHour }),
    }));
};

export const totalGpuSeconds = (usage: readonly ProviderUsage[]): number =>
  usage.reduce((n, u) => n + u.gpuSeconds, 0);

/**
 * What execution saw of one (attempt, rank) on its own clock: first seen running (`fromMs`: the
 * start reply or the first running status), last seen running or its exit seen (`toMs`).
 */
export interface Observation {
  readonly fromMs: number;
  readonly toMs: number;
  readonly exited: boolean;
}

export type Observations = Readonly<Record<string, Observation>>;

/**
 * Records a sighting. A rank is observed from the first time it was seen started; statuses of a
 * rank never seen started add nothing (so an edge cannot bill an attempt's rank that never ran),
 * and nothing moves an observation after the exit was seen.
 */
export const observe = (
  observed: Observations,
  key: string,
  what: 'started' | 'seen' | 'exited',
  at: string,
): Observations => {
  const ms = Date.parse(at);
  const o = observed[key];
  if (!o)
    return what === 'started' ? { ...observed, [key]: { fromMs: ms, toMs: ms, exited: false } } : observed;
  if (o.exited || what === 'started') return observed;
  return { ...observed, [key]: { fromMs: o.fromMs, toMs: Math.max(o.toMs, ms), exited: what === 'exited' } };
};

export const observedSeconds = (o: Observation | undefined): number =>
  o === undefined ? 0 : Math.max(0, o.toMs - o.fromMs) / 1000;

/** How far an edge's claim may exceed the observation before it is disputed: the larger of both. */
export interface UsageTolerance {
  /** Default 5. */
  readonly seconds: number;
  /** Percent of the observed seconds. Default 5. */
  readonly percent: number;
}

export const DEFAULT_USAGE_TOLERANCE: UsageTolerance = { seconds: 5, percent: 5 };

/**
 * The seconds paid per (attempt, rank): the lower of the edge's signed reading and execution's own
 * observation. Both only grow, so the paid figure does too.
 */
export const paidMeter = (meter: WallMeter, observed: Observations): WallMeter =>
  Object.fromEntries(
    Object.entries(meter).map(([key, edge]) => [key, Math.min(edge, observedSeconds(observed[key]))]),
  );

/** A dispute, when the edge claims more than the observation plus the tolerance; else null. */
export const disputeOf = (
  edgeSeconds: number,
  observation: Observation | undefined,
  tolerance: UsageTolerance = DEFAULT_USAGE_TOLERANCE,
): { edgeSeconds: number; observedSeconds: number; paidSeconds: number } | null => {
  const observed = observedSeconds(observation);
  const allowed = Math.max(tolerance.seconds, (observed * tolerance.percent) / 100);
  if (edgeSeconds <= observed + allowed) return null;
  return { edgeSeconds, observedSeconds: observed, paidSeconds: Math.min(edgeSeconds, observed) };
};

/** A provider's fault as execution recorded it; its billable seconds are set at the job's end. */
export interface FaultRecord {
  readonly providerId: string;
  readonly kind: z.infer<typeof FaultKindSchema>;
  /** Whether the evidence is execution's own (settlement slashes only verified faults). */
  readonly verified: boolean;
  readonly detail: string;
}

/**
 * The job's faults for its end: each provider's billable GPU-seconds are what it is paid (its paid
 * usage): a fault forfeits nothing that ran, it marks the provider (and, verified, lets the
 * subnet slash its stake).
 */
export const faultsOf = (faults: readonly FaultRecord[], usage: readonly ProviderUsage[]): ProviderFault[] =>
  faults.map((f) => ({
    providerId: f.providerId,
    kind: f.kind,
    billableGpuSeconds: usage.find((u) => u.providerId === f.providerId)?.gpuSeconds ?? 0,
    verified: f.verified,
    detail: f.detail.slice(0, 1024),
  }));
