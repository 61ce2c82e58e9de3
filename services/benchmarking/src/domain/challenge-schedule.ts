import type { ChallengeReason, GpuVerificationStatus } from '@gpunet/contracts';
import type { Rng } from '@gpunet/netcoord';

/** What the challenge schedule knows of one provider. */
export interface ProviderChallengeView {
  readonly providerId: string;
  readonly online: boolean;
  /** A reservation holds its GPUs. */
  readonly busy: boolean;
  /** A challenge is out (at most one per provider). */
  readonly pending: boolean;
  readonly gpus: readonly { readonly uuid: string; readonly status: GpuVerificationStatus }[];
  /** The running jobs on its GPUs: which GPUs each holds and its subnet's spot-check rate. */
  readonly jobs: readonly {
    readonly jobId: string;
    readonly gpuUuids: readonly string[];
    readonly spotChecksPerGpuHour: number;
  }[];
}

export interface ChallengeSchedulePolicy {
  /** Mean time between idle challenges of one GPU (a Poisson process); 0: none. */
  readonly idleIntervalMs: number;
  /** Challenges per tick at most (the rest wait for the next one). */
  readonly maxPerTick: number;
}

export interface DueChallenge {
  readonly providerId: string;
  readonly gpuUuid: string;
  readonly reason: ChallengeReason;
  readonly jobId: string | null;
}

/** Chance that a Poisson process of `ratePerMs` fires within `dtMs`. */
const fires = (ratePerMs: number, dtMs: number): number =>
  ratePerMs <= 0 || dtMs <= 0 ? 0 : 1 - Math.exp(-ratePerMs * dtMs);

const HOUR = 3_600_000;
const PRIORITY: Record<ChallengeReason, number> = { manual: 0, registration: 1, 'spot-check': 2, idle: 3 };

/**
 * Which GPUs to challenge now, `dtMs` after the last tick: a GPU still `pending` (registered or its
 * hardware changed) on an online provider not busy (`registration`); each GPU of a running job at
 * the job's subnet rate (`spot-check`, the job named); each GPU of a provider neither busy nor
 * running a job at random, one challenge per `idleIntervalMs` on average (`idle`). Simulated GPUs
 * never. One challenge per provider (its most urgent; the first in claim order among equals), none
 * where one is out. Every candidate draws whether chosen or not, so one provider's state does not
 * shift another's luck; deterministic for a given `rng`.
 */
export const dueChallenges = (
  views: readonly ProviderChallengeView[],
  dtMs: number,
  rng: Rng,
  policy: ChallengeSchedulePolicy,
): DueChallenge[] => {
  const due: DueChallenge[] = [];
  for (const v of [...views].sort((a, b) => (a.providerId < b.providerId ? -1 : 1))) {
    const candidates: DueChallenge[] = [];
    const challengeable = v.gpus.filter((g) => g.status !== 'simulated');
    const running = new Map<string, { jobId: string; rate: number }>();
    for (const job of v.jobs)
      for (const uuid of job.gpuUuids)
        running.set(uuid, { jobId: job.jobId, rate: job.spotChecksPerGpuHour });
    for (const g of challengeable) {
      const draw = rng();
      const job = running.get(g.uuid);
      if (g.status === 'pending') {
        if (!v.busy && job === undefined)
          candidates.push({ providerId: v.providerId, gpuUuid: g.uuid, reason: 'registration', jobId: null });
      } else if (job !== undefined) {
        if (draw < fires(job.rate / HOUR, dtMs))
          candidates.push({
            providerId: v.providerId,
            gpuUuid: g.uuid,
            reason: 'spot-check',
            jobId: job.jobId,
          });
      } else if (!v.busy && v.jobs.length === 0 && policy.idleIntervalMs > 0) {
        if (draw < fires(1 / policy.idleIntervalMs, dtMs))
          candidates.push({ providerId: v.providerId, gpuUuid: g.uuid, reason: 'idle', jobId: null });
      }
    }
    if (!v.online || v.pending || candidates.length === 0) continue;
    const first = candidates.reduce((a, b) => (PRIORITY[b.reason] < PRIORITY[a.reason] ? b : a));
    due.push(first);
  }
  return due
    .map((d, i) => ({ d, i }))
    .sort((x, y) => PRIORITY[x.d.reason] - PRIORITY[y.d.reason] || x.i - y.i)
    .slice(0, policy.maxPerTick)
    .map((x) => x.d);
};
