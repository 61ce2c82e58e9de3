import type { Causation } from '@gpunet/contracts';
import {
  type ChallengePolicy,
  DEFAULT_CHALLENGE_POLICY,
  newOpening,
  verifyOpening,
} from '@gpunet/edge-bench';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import type { CommitmentAnswer, OpeningVerdict, PendingChallenge } from '../domain/gpu-challenge';
import { sendChallenge, sendOpening } from '../infra/challenge-commands';
import type { BenchmarkingConfig } from './benchmarking.config';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import {
  BENCHMARKING_CONFIG,
  BENCHMARKING_METRICS,
  BENCHMARKING_MONOTONIC_CLOCK,
  BENCHMARKING_RANDOM_BYTES,
} from './benchmarking.tokens';
import type { MonotonicClock } from './monotonic-clock';
import { ProviderBenchmarks } from './provider-benchmarks.service';

/** A challenge as issued: what goes to the edge, and the stored event that caused it. */
export interface IssuedChallenge {
  readonly providerId: string;
  readonly challenge: Pick<
    PendingChallenge,
    'challengeId' | 'gpuUuid' | 'seed' | 'n' | 'dtype' | 'deadlineMs'
  >;
  readonly cause: Causation;
}

/**
 * Runs an issued challenge to its end: sends it to the edge (core request/reply, waiting the
 * deadline plus `challengeLateGraceMs`) and times the commitment on the verifier's monotonic clock;
 * a commitment in time is opened at rows chosen only now, and the opening checked
 * (`@gpunet/edge-bench`'s `verifyOpening`). Each answer is decided on the provider's stream as it comes, so a
 * restart in between leaves a challenge out that the next tick decides `no-answer` at its expiry.
 */
@Injectable()
export class GpuChallenges {
  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(ProviderBenchmarks) private readonly benchmarks: ProviderBenchmarks,
    @Inject(BENCHMARKING_CONFIG) private readonly config: BenchmarkingConfig,
    @Inject(BENCHMARKING_MONOTONIC_CLOCK) private readonly monotonic: MonotonicClock,
    @Inject(BENCHMARKING_RANDOM_BYTES) private readonly randomBytes: (size: number) => Uint8Array,
    @Inject(BENCHMARKING_METRICS) private readonly metrics: BenchmarkingMetrics,
  ) {}

  /**
   * The policy challenges are sized and opened by: the library's, with the service's overrides. A
   * `maxN` below the library's `minN` lowers `minN` with it (else every sizing would throw).
   */
  policy(): ChallengePolicy {
    const overrides = this.config.challengePolicy;
    const minN = Math.min(DEFAULT_CHALLENGE_POLICY.minN, overrides.maxN ?? DEFAULT_CHALLENGE_POLICY.minN);
    return { ...DEFAULT_CHALLENGE_POLICY, ...overrides, minN };
  }

  /** Runs `issued` to its outcome (recorded on the provider's stream); never throws for the edge's behaviour. */
  async run(issued: IssuedChallenge): Promise<void> {
    const { providerId, challenge: c, cause } = issued;
    const started = this.monotonic.nowMs();
    const commit = await sendChallenge(
      this.eventing.client,
      providerId,
      {
        challengeId: c.challengeId,
        seed: c.seed,
        gpuUuid: c.gpuUuid,
        n: c.n,
        dtype: c.dtype,
        deadlineMs: c.deadlineMs,
      },
      { cause, timeoutMs: c.deadlineMs + this.config.challengeLateGraceMs },
    );
    const elapsedMs = this.monotonic.nowMs() - started;
    const bytes = { bytesSent: commit.bytesSent, bytesReceived: commit.bytesReceived };
    let answer: CommitmentAnswer;
    if (commit.kind !== 'reply') answer = commit;
    else if (commit.reply.challengeId !== c.challengeId)
      answer = { kind: 'malformed', detail: `the reply answers challenge ${commit.reply.challengeId}` };
    else if (commit.reply.outcome === 'declined')
      answer = { kind: 'declined', code: commit.reply.code, message: commit.reply.message, elapsedMs };
    else answer = { kind: 'committed', root: commit.reply.root, elapsedMs };
    this.metrics.commands.inc({ kind: 'challenge', answer: answer.kind });
    const { committed } = await this.benchmarks.recordCommitment(providerId, c.challengeId, answer, bytes);
    if (!committed || answer.kind !== 'committed') return;

    const policy = this.policy();
    const opening = newOpening(c.n, policy.openRows, this.randomBytes);
    const open = await sendOpening(
      this.eventing.client,
      providerId,
      { challengeId: c.challengeId, rows: opening.rows, freivaldsSeed: opening.freivaldsSeed },
      { cause, timeoutMs: this.config.challengeOpenTimeoutMs },
    );
    let verdict: OpeningVerdict;
    if (open.kind !== 'reply') verdict = { ok: false, kind: open.kind, detail: open.detail };
    else if (open.reply.challengeId !== c.challengeId)
      verdict = {
        ok: false,
        kind: 'malformed',
        detail: `the opening answers challenge ${open.reply.challengeId}`,
      };
    else if (open.reply.outcome === 'declined')
      verdict = { ok: false, kind: 'declined', detail: `${open.reply.code}: ${open.reply.message}` };
    else
      verdict = verifyOpening({
        seed: c.seed,
        n: c.n,
        root: answer.root,
        rows: opening.rows,
        freivaldsSeed: opening.freivaldsSeed,
        reply: open.reply,
      });
    this.metrics.commands.inc({ kind: 'challenge-open', answer: open.kind });
    await this.benchmarks.recordOpening(providerId, c.challengeId, opening.rows, verdict, {
      bytesSent: open.bytesSent,
      bytesReceived: open.bytesReceived,
    });
  }
}
