import { newEventId } from '@gpunet/contracts';
import type { EventingRuntime } from '@gpunet/eventing';
import type { CandidateRequest } from '../domain/candidate.filter';
import { CandidateCache } from './candidates.service';
import type { DiscoveryConfig } from './discovery.config';
import type { DiscoveryMetrics } from './discovery.metrics';
import { HeartbeatIngest } from './heartbeat.ingest';
import { LivenessMonitor, type SweepResult } from './liveness.monitor';
import { ProviderCommands } from './provider.commands';

/**
 * Discovery's own work beside its handlers: the provider commands, the candidate index, the
 * heartbeat ingest and the liveness sweeps. Nest calls the hooks: the index is loaded and the
 * ingest listening before the transport starts consuming and answering; at shutdown the sweeps
 * stop and the last heartbeats are written before the eventing runtime closes.
 */
export class DiscoveryService {
  readonly commands: ProviderCommands;
  readonly candidates: CandidateCache;
  readonly ingest: HeartbeatIngest;
  readonly monitor: LivenessMonitor;

  constructor(
    readonly config: DiscoveryConfig,
    private readonly eventing: EventingRuntime,
    readonly metrics: DiscoveryMetrics,
  ) {
    const { db, nats, clock, onError } = eventing;
    this.candidates = new CandidateCache({ db, nc: nats.nc, onError });
    this.commands = new ProviderCommands(eventing, (ids) => void this.candidates.refresh(ids));
    this.ingest = new HeartbeatIngest({
      nc: nats.nc,
      db,
      clock,
      metrics,
      prefix: config.prefix,
      flushIntervalMs: config.heartbeatFlushMs,
      onError,
    });
    this.monitor = new LivenessMonitor({
      db,
      commands: this.commands,
      ingest: this.ingest,
      clock,
      newId: newEventId,
      metrics,
      windowMs: config.livenessWindowMs,
      intervalMs: config.sweepIntervalMs,
      onError,
      afterChange: (ids) => this.candidates.refresh(ids),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.candidates.start();
    this.ingest.start();
    this.monitor.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.monitor.stop();
    await this.ingest.stop();
  }

  /** One liveness sweep now (also run every `sweepIntervalMs`). */
  sweep(): Promise<SweepResult> {
    return this.monitor.sweep();
  }

  /** Writes buffered heartbeats now (also every `heartbeatFlushMs`). */
  flushHeartbeats(): Promise<void> {
    return this.ingest.flush();
  }

  /** One page of candidates (what `q.discovery.candidates.v1` answers). */
  findCandidates(request: CandidateRequest) {
    return this.candidates.query(request, this.eventing.clock.now().getTime());
  }
}
