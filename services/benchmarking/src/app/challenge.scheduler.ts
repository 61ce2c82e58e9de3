import { causedBy, newEventId } from '@gpunet/contracts';
import { sizeChallenge } from '@gpunet/edge-bench';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import { type DueChallenge, dueChallenges } from '../domain/challenge-schedule';
import { claimedFigure } from '../domain/claimed-figure';
import { challengeCandidates, overdueChallenges, tryLockChallengeTick } from '../infra/challenges.repository';
import type { BenchmarkingConfig } from './benchmarking.config';
import { BENCHMARKING_CONFIG, BENCHMARKING_RANDOM, BENCHMARKING_RANDOM_BYTES } from './benchmarking.tokens';
import { GpuChallenges, type IssuedChallenge } from './gpu-challenges.service';
import { PeriodicTask } from './periodic-task';
import { ProviderBenchmarks } from './provider-benchmarks.service';

export interface ChallengeTickResult {
  /** Challenges out past their time, decided `no-answer`: provider ids. */
  readonly expired: readonly string[];
  /** Challenges issued and run to their outcome this tick. */
  readonly challenged: readonly (DueChallenge & { readonly challengeId: string })[];
  /** Due, but nothing to size the challenge by (an unknown model never measured). */
  readonly unsized: readonly DueChallenge[];
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/**
 * Beyond the waits of a run (deadline + grace, then the opening's timeout), so that another
 * replica's tick never expires a challenge whose answers are still being recorded.
 */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * The challenge tick (every `challengeTickIntervalMs`, or `tick()`): decides the challenges out
 * past their time `no-answer` (what a restart left behind), then issues the ones due
 * (`dueChallenges`: registration, spot checks of running jobs, idle ones at random), each sized for
 * the figure placement uses for its GPU (`claimedFigure`), and runs them to their outcome. Each
 * challenge is appended (issued) before its command goes out. One replica ticks at a time; business
 * time is the injected clock's, the random draws the injected source's.
 */
@Injectable()
export class ChallengeScheduler extends PeriodicTask<ChallengeTickResult> {
  private lastTickMs: number | null = null;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(ProviderBenchmarks) private readonly benchmarks: ProviderBenchmarks,
    @Inject(GpuChallenges) private readonly challenges: GpuChallenges,
    @Inject(BENCHMARKING_CONFIG) private readonly config: BenchmarkingConfig,
    @Inject(BENCHMARKING_RANDOM) private readonly random: () => number,
    @Inject(BENCHMARKING_RANDOM_BYTES) private readonly randomBytes: (size: number) => Uint8Array,
  ) {
    super({
      intervalMs: config.challengesEnabled ? config.challengeTickIntervalMs : 0,
      onError: (e) => eventing.onError(e, 'challenge tick'),
    });
  }

  /** One tick now, its challenges run to their end; a tick asked for while one runs is that one. */
  tick(): Promise<ChallengeTickResult> {
    return this.runNow();
  }

  protected override async runOnce(): Promise<ChallengeTickResult> {
    const none: ChallengeTickResult = { expired: [], challenged: [], unsized: [] };
    if (!this.config.challengesEnabled) return none;
    const now = this.eventing.clock.now();
    // The random draws cover the business time since the last tick (the first covers one interval).
    const dtMs =
      this.lastTickMs === null ? this.config.challengeTickIntervalMs : now.getTime() - this.lastTickMs;
    const decided = await this.eventing.db.transaction(async (tx) => {
      if (!(await tryLockChallengeTick(tx))) return null;
      this.lastTickMs = now.getTime();
      const expired: string[] = [];
      for (const o of await overdueChallenges(tx, now.toISOString())) {
        await this.benchmarks.expireChallenge(o.providerId, o.challengeId, tx);
        expired.push(o.providerId);
      }
      const candidates = await challengeCandidates(tx, now);
      const due = dueChallenges(
        candidates.map((c) => c.view),
        Math.max(0, dtMs),
        this.random,
        { idleIntervalMs: this.config.challengeIdleIntervalMs, maxPerTick: this.config.maxChallengesPerTick },
      );
      const policy = this.challenges.policy();
      const issued: (IssuedChallenge & { due: DueChallenge })[] = [];
      const unsized: DueChallenge[] = [];
      for (const d of due) {
        const candidate = candidates.find((c) => c.view.providerId === d.providerId)!;
        const gpu = candidate.claim.gpus.find((g) => g.uuid === d.gpuUuid);
        const figure = gpu === undefined ? null : claimedFigure(gpu, candidate.profile);
        if (figure === null) {
          unsized.push(d);
          continue;
        }
        const { n, deadlineMs } = sizeChallenge(figure.tflops, policy);
        const challengeId = newEventId();
        const challenge = {
          challengeId,
          gpuUuid: d.gpuUuid,
          reason: d.reason,
          jobId: d.jobId,
          seed: hex(this.randomBytes(32)),
          n,
          dtype: figure.dtype,
          claimedTflops: figure.tflops,
          deadlineMs,
          expiresAt: new Date(
            now.getTime() +
              deadlineMs +
              this.config.challengeLateGraceMs +
              this.config.challengeOpenTimeoutMs +
              EXPIRY_MARGIN_MS,
          ).toISOString(),
        };
        const stored = await this.benchmarks.issueChallenge(d.providerId, challenge, tx);
        if (stored) issued.push({ providerId: d.providerId, challenge, cause: causedBy(stored), due: d });
      }
      return { expired, issued, unsized };
    });
    if (decided === null) return none;
    await Promise.all(decided.issued.map((i) => this.challenges.run(i)));
    return {
      expired: decided.expired,
      challenged: decided.issued.map((i) => ({ ...i.due, challengeId: i.challenge.challengeId })),
      unsized: decided.unsized,
    };
  }
}
