import { type LaunchedRank, modelMatches } from '@gpunet/contracts';
import type { z } from 'zod';
import type { ProviderUsageSchema } from '@gpunet/contracts';

export type ProviderUsage = z.infer<typeof ProviderUsageSchema>;

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

/** Wall seconds each (attempt, rank) has run, as its edge reported them. Keyed `attempt:rank`. */
export type WallMeter = Readonly<Record<string, number>>;

export const meterKey = (attempt: number, rank: number): string => `${attempt}:${rank}`;

/**
 * Cumulative usage per provider: Σ GPUs × reported wall seconds over every rank of every attempt
 * that ran there. Only what ranks actually ran counts (a rank that never started has no reading);
 * readings only grow, so the sum does too. Providers without any GPU of the job are left out
 * (the contract counts at least one GPU per provider).
 */
export const usageOf = (
  ranks: readonly LaunchedRank[],
  attempts: number,
  meter: WallMeter,
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
    }));
};

export const totalGpuSeconds = (usage: readonly ProviderUsage[]): number =>
  usage.reduce((n, u) => n + u.gpuSeconds, 0);
