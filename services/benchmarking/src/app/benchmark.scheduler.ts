import {
  type BenchmarkSuite,
  type Causation,
  causedBy,
  newEventId,
  RunBenchmarkOnEdge,
} from '@gpunet/contracts';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import { type BenchmarkSchedulePolicy, type DueBenchmark, dueBenchmarks } from '../domain/benchmark-schedule';
import { overdueRequests, providerScheduleViews, tryLockSweep } from '../infra/benchmark-state.repository';
import { sendEdgeCommand } from '../infra/edge-commands';
import type { BenchmarkingConfig } from './benchmarking.config';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { BENCHMARKING_CONFIG, BENCHMARKING_METRICS, BENCHMARKING_RANDOM } from './benchmarking.tokens';
import { PeriodicTask } from './periodic-task';
import { ProviderBenchmarks } from './provider-benchmarks.service';

export interface SweepResult {
  readonly expired: readonly string[];
  readonly requested: readonly DueBenchmark[];
  readonly declined: readonly string[];
}

const SUITES: BenchmarkSuite[] = ['matmul', 'memory', 'host-device', 'peer'];

const schedulePolicyOf = (config: BenchmarkingConfig): BenchmarkSchedulePolicy => ({
  renewBeforeMs: config.renewBeforeMs,
  spotCheckProbability: config.spotCheckProbability,
  spotCheckMinIntervalMs: config.spotCheckMinIntervalMs,
  // A failed or declined request is retried no sooner than this.
  retryAfterMs: Math.min(config.benchmarkTimeoutMs, 600_000),
  maxPerSweep: config.maxRequestsPerSweep,
  allowWhileBusy: config.allowWhileBusy,
});

/**
 * Periodic benchmarking (every `sweepIntervalMs`, or `sweep()`): fails requests that outlived their
 * deadline, then asks the providers that are due (`dueBenchmarks`: first run, new hardware, expiring
 * profile, random spot check) to measure themselves. Each request is appended (the provider's decider
 * records it as pending) before the command goes out, so the report can never arrive before its
 * request. One replica sweeps at a time (advisory lock); business time is the injected clock's, so
 * tests move it.
 */
@Injectable()
export class BenchmarkScheduler extends PeriodicTask<SweepResult> {
  private readonly policy: BenchmarkSchedulePolicy;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(ProviderBenchmarks) private readonly benchmarks: ProviderBenchmarks,
    @Inject(BENCHMARKING_CONFIG) private readonly config: BenchmarkingConfig,
    @Inject(BENCHMARKING_RANDOM) private readonly random: () => number,
    @Inject(BENCHMARKING_METRICS) private readonly metrics: BenchmarkingMetrics,
  ) {
    super({ intervalMs: config.sweepIntervalMs, onError: (e) => eventing.onError(e, 'benchmark sweep') });
    this.policy = schedulePolicyOf(config);
  }

  /** One sweep now; a sweep asked for while one runs is that one. */
  sweep(): Promise<SweepResult> {
    return this.runNow();
  }

  protected override async runOnce(): Promise<SweepResult> {
    const { benchmarks } = this;
    const now = this.eventing.clock.now();
    const decided = await this.eventing.db.transaction(async (tx) => {
      if (!(await tryLockSweep(tx))) return null;
      const expired: string[] = [];
      for (const overdue of await overdueRequests(tx, now.toISOString())) {
        await benchmarks.expire(overdue.providerId, overdue.requestId, tx);
        expired.push(overdue.providerId);
      }
      const due = dueBenchmarks(await providerScheduleViews(tx), now.getTime(), this.random, this.policy);
      const requests: (DueBenchmark & { requestId: string; cause: Causation })[] = [];
      for (const d of due) {
        const requestId = newEventId();
        const requested = await benchmarks.request(d, requestId, this.config.benchmarkTimeoutMs, tx);
        // The command to the edge is caused by the request as recorded.
        if (requested) requests.push({ ...d, requestId, cause: causedBy(requested) });
      }
      return { expired, requests };
    });
    if (decided === null) return { expired: [], requested: [], declined: [] };
    const answers = await Promise.all(
      decided.requests.map(async (r) => ({
        r,
        answer: await sendEdgeCommand(
          this.eventing.client,
          RunBenchmarkOnEdge,
          r.providerId,
          {
            requestId: r.requestId,
            reason: r.reason,
            suites: SUITES,
            maxDurationMs: this.config.benchmarkMaxDurationMs,
            ttlMs: this.config.profileTtlMs,
            allowWhileBusy: this.policy.allowWhileBusy,
          },
          { cause: r.cause, timeoutMs: this.config.commandTimeoutMs },
        ),
      })),
    );
    const declined: string[] = [];
    for (const { r, answer } of answers) {
      this.metrics.commands.inc({ kind: 'benchmark', answer: answer.outcome });
      if (answer.outcome !== 'declined') continue;
      declined.push(r.providerId);
      await benchmarks.recordDecline(
        r.providerId,
        r.requestId,
        `${answer.reason.code}: ${answer.reason.message}`,
      );
    }
    return {
      expired: decided.expired,
      requested: decided.requests.map(({ providerId, reason }) => ({ providerId, reason })),
      declined,
    };
  }
}
