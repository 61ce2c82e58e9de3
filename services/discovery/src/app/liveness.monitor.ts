import { type Clock, originOf } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import { livenessTransitions } from '../domain/liveness';
import { livenessCandidates, lockLivenessSweep } from '../infra/liveness.repository';
import type { DiscoveryMetrics } from './discovery.metrics';
import type { HeartbeatIngest } from './heartbeat.ingest';
import type { ProviderCommands } from './provider.commands';

export interface SweepResult {
  readonly offline: readonly string[];
  readonly online: readonly string[];
}

/**
 * Marks providers offline after `windowMs` of silence and online when they are heard again. One
 * replica sweeps at a time (a transaction-scoped advisory lock); every transition is an event of the
 * provider's aggregate, projected in the same transaction. Time is `clock`'s, so tests move it.
 */
export class LivenessMonitor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult> | undefined;

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly commands: ProviderCommands;
      readonly ingest: HeartbeatIngest;
      readonly clock: Clock;
      /** Id of each sweep: the cause of what it decides. */
      readonly newId: () => string;
      readonly metrics: DiscoveryMetrics;
      readonly windowMs: number;
      readonly intervalMs: number;
      readonly onError?: (error: unknown, context: string) => void;
      /** Awaited after a sweep that changed providers (the candidate cache re-reads them). */
      readonly afterChange?: (providerIds: readonly string[]) => Promise<void>;
    },
  ) {}

  start(): void {
    if (this.deps.intervalMs > 0)
      this.timer = setInterval(() => {
        this.sweep().catch((e: unknown) => this.deps.onError?.(e, 'liveness sweep'));
      }, this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One sweep now. Does nothing while discovery cannot hear heartbeats. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.sweepOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepOnce(): Promise<SweepResult> {
    const result = await this.decide();
    // Queries answered after the sweep returns see its outcome.
    const changed = [...result.offline, ...result.online];
    if (changed.length > 0) await this.deps.afterChange?.(changed);
    return result;
  }

  private async decide(): Promise<SweepResult> {
    const { db, ingest, clock, windowMs } = this.deps;
    if (!ingest.listening) return { offline: [], online: [] };
    await ingest.flush();
    const now = clock.now().getTime();
    const cutoff = new Date(now - windowMs).toISOString();
    return db.transaction(async (tx) => {
      if (!(await lockLivenessSweep(tx))) return { offline: [], online: [] };
      const rows = await livenessCandidates(tx, cutoff);
      const t = livenessTransitions(rows, now, windowMs, ingest.evidenceSinceMs);
      const at = new Date(now).toISOString();
      // A sweep starts a chain of its own: what it decides is caused by it.
      const cause = originOf(this.deps.newId());
      for (const p of t.goOffline) {
        const lastSeenAt = p.lastSeenAtMs === null ? null : new Date(p.lastSeenAtMs).toISOString();
        await this.deps.commands.run(
          { type: 'MarkOffline', providerId: p.providerId, at, lastSeenAt },
          cause,
          tx,
        );
        this.deps.metrics.livenessTransitions.inc({ to: 'offline' });
      }
      for (const id of t.goOnline) {
        await this.deps.commands.run({ type: 'MarkOnline', providerId: id, at }, cause, tx);
        this.deps.metrics.livenessTransitions.inc({ to: 'online' });
      }
      return { offline: t.goOffline.map((p) => p.providerId), online: [...t.goOnline] };
    });
  }
}
