import { type BenchmarkSuite, type Clock, newEventId, RunBenchmarkOnEdge } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import type { NatsConnection } from '@nats-io/nats-core';
import { type BenchmarkSchedulePolicy, type DueBenchmark, dueBenchmarks } from '../domain/benchmark-schedule';
import { sendEdgeCommand } from '../infra/edge-commands';
import type { ProviderBenchmarkCommands } from './benchmark.commands';
import type { BenchmarkingMetrics } from './benchmarking.metrics';

export interface SweepResult {
  readonly expired: readonly string[];
  readonly requested: readonly DueBenchmark[];
  readonly declined: readonly string[];
}

export interface BenchmarkSchedulerDeps {
  readonly db: Database;
  readonly nc: NatsConnection;
  readonly commands: ProviderBenchmarkCommands;
  readonly clock: Clock;
  readonly random: () => number;
  readonly metrics: BenchmarkingMetrics;
  readonly prefix: string;
  readonly policy: BenchmarkSchedulePolicy;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly maxDurationMs: number;
  readonly profileTtlMs: number;
  readonly commandTimeoutMs: number;
  readonly onError?: (error: unknown, context: string) => void;
}

const SUITES: BenchmarkSuite[] = ['matmul', 'memory', 'host-device', 'peer'];

interface ViewRow {
  provider_id: string;
  status: string;
  busy: boolean;
  inventory_changed_at: Date | null;
  pending_request_id: string | null;
  last_requested_at: Date | null;
  measured_at: Date | null;
  expires_at: Date | null;
}

/**
 * Periodic benchmarking: fails requests that outlived their deadline, then asks the providers that
 * are due (`dueBenchmarks`: first run, new hardware, expiring profile, random spot check) to measure
 * themselves. Each request is appended (the provider's decider records it as pending) before the
 * command goes out, so the report can never arrive before its request. One replica sweeps at a time
 * (advisory lock); business time is `clock`'s, so tests move it.
 */
export class BenchmarkScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult> | undefined;

  constructor(private readonly deps: BenchmarkSchedulerDeps) {}

  start(): void {
    if (this.deps.intervalMs > 0)
      this.timer = setInterval(() => {
        this.sweep().catch((e: unknown) => this.deps.onError?.(e, 'benchmark sweep'));
      }, this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  sweep(): Promise<SweepResult> {
    this.running ??= this.sweepOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepOnce(): Promise<SweepResult> {
    const { db, commands, clock } = this.deps;
    const now = clock.now();
    const decided = await db.transaction(async (tx) => {
      const [lock] = await tx.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
        [`${tx.schema}.benchmark-sweep`],
      );
      if (!lock?.locked) return null;
      const expired: string[] = [];
      const overdue = await tx.query<{ provider_id: string; pending_request_id: string }>(
        `SELECT provider_id, pending_request_id FROM "${tx.schema}".benchmark_state
          WHERE pending_request_id IS NOT NULL AND pending_deadline <= $1`,
        [now.toISOString()],
      );
      for (const row of overdue) {
        await commands.run(
          {
            type: 'ExpireRequest',
            providerId: row.provider_id,
            requestId: row.pending_request_id,
            at: now.toISOString(),
          },
          { correlationId: row.pending_request_id },
          tx,
        );
        expired.push(row.provider_id);
      }
      const rows = await tx.query<ViewRow>(
        `SELECT p.provider_id, p.status, p.busy, p.inventory_changed_at, s.pending_request_id, s.last_requested_at,
                g.measured_at, g.expires_at
           FROM "${tx.schema}".providers p
           LEFT JOIN "${tx.schema}".benchmark_state s USING (provider_id)
           LEFT JOIN "${tx.schema}".gpu_profiles g USING (provider_id)
          WHERE p.status <> 'deregistered'`,
      );
      const due = dueBenchmarks(
        rows.map((r) => ({
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
        })),
        now.getTime(),
        this.deps.random,
        this.deps.policy,
      );
      const requests: (DueBenchmark & { requestId: string })[] = [];
      for (const d of due) {
        const requestId = newEventId();
        const events = await commands.run(
          {
            type: 'RequestBenchmark',
            providerId: d.providerId,
            requestId,
            reason: d.reason,
            at: now.toISOString(),
            deadline: new Date(now.getTime() + this.deps.timeoutMs).toISOString(),
          },
          { correlationId: requestId },
          tx,
        );
        if (events.length > 0) requests.push({ ...d, requestId });
      }
      return { expired, requests };
    });
    if (decided === null) return { expired: [], requested: [], declined: [] };
    const answers = await Promise.all(
      decided.requests.map(async (r) => ({
        r,
        answer: await sendEdgeCommand(
          this.deps.nc,
          RunBenchmarkOnEdge,
          r.providerId,
          {
            requestId: r.requestId,
            reason: r.reason,
            suites: SUITES,
            maxDurationMs: this.deps.maxDurationMs,
            ttlMs: this.deps.profileTtlMs,
            allowWhileBusy: this.deps.policy.allowWhileBusy,
          },
          { prefix: this.deps.prefix, timeoutMs: this.deps.commandTimeoutMs, correlationId: r.requestId },
        ),
      })),
    );
    const declined: string[] = [];
    for (const { r, answer } of answers) {
      this.deps.metrics.commands.inc({ kind: 'benchmark', answer: answer.outcome });
      if (answer.outcome !== 'declined') continue;
      declined.push(r.providerId);
      await db.transaction((tx) =>
        commands.run(
          {
            type: 'RecordDecline',
            providerId: r.providerId,
            requestId: r.requestId,
            at: clock.now().toISOString(),
            detail: `${answer.reason.code}: ${answer.reason.message}`,
          },
          { correlationId: r.requestId },
          tx,
        ),
      );
    }
    return {
      expired: decided.expired,
      requested: decided.requests.map(({ providerId, reason }) => ({ providerId, reason })),
      declined,
    };
  }
}
