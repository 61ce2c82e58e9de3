import {
  type Causation,
  type EdgeBenchmarkReported,
  originOf,
  type PayloadOf,
  streamIdOf,
} from '@gpunet/contracts';
import {
  type CommandHandler,
  type CommandMetadata,
  EVENTING,
  type EventingRuntime,
  type StoredEvent,
  type Tx,
} from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import type { DueBenchmark } from '../domain/benchmark-schedule';
import {
  type ProviderBenchmarkCommand,
  type ProviderBenchmarkEvent,
  type ProviderBenchmarkState,
  providerBenchmarkDecider,
} from '../domain/provider-benchmark.decider';
import { projectBenchmarkEvents } from '../infra/benchmark-state.repository';
import { loadClaim } from '../infra/providers.repository';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { BENCHMARKING_METRICS } from './benchmarking.tokens';

/**
 * One provider's benchmarking decisions (`providerBenchmarkDecider`, stream
 * `benchmarking-provider-<id>`) through the command handler: its state and profile rows are projected
 * in the deciding transaction, so the sweep and the queries never read a decision half applied.
 */
@Injectable()
export class ProviderBenchmarks {
  private readonly handler: CommandHandler<
    ProviderBenchmarkCommand,
    ProviderBenchmarkEvent,
    ProviderBenchmarkState
  >;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(BENCHMARKING_METRICS) private readonly metrics: BenchmarkingMetrics,
  ) {
    this.handler = eventing.commandHandler({
      decider: providerBenchmarkDecider,
      effects: ({ tx, events }) => projectBenchmarkEvents(tx, events),
    });
  }

  /**
   * Asks for a benchmark of `due` (the chain's first message: `requestId` starts its correlation),
   * its report due within `timeoutMs`. Returns the `benchmark.requested` event as stored, or
   * undefined when a request is already out.
   */
  async request(
    due: DueBenchmark,
    requestId: string,
    timeoutMs: number,
    tx: Tx,
  ): Promise<StoredEvent | undefined> {
    const now = this.eventing.clock.now();
    const { events } = await this.decide(
      {
        type: 'RequestBenchmark',
        providerId: due.providerId,
        requestId,
        reason: due.reason,
        at: now.toISOString(),
        deadline: new Date(now.getTime() + timeoutMs).toISOString(),
      },
      originOf(requestId),
      tx,
    );
    return events[0];
  }

  /**
   * Applies an edge's (verified) benchmark report, caused by `cause`: checked against the claim
   * discovery last reported. Returns whether it was evidence — benchmarks are only ever requested of
   * providers discovery announced, and a report answers only the request out.
   */
  async recordReport(
    report: PayloadOf<typeof EdgeBenchmarkReported>,
    cause: Causation,
    tx: Tx,
  ): Promise<boolean> {
    const claim = await loadClaim(tx, report.edgeId);
    if (claim === null) return false;
    const { domainEvents } = await this.decide(
      {
        type: 'RecordReport',
        providerId: report.edgeId,
        requestId: report.requestId,
        at: this.now(),
        outcome: report.outcome,
        profile: report.profile,
        error: report.error,
        claim,
      },
      cause,
      tx,
    );
    for (const e of domainEvents) {
      if (e.type === 'provider.claim.verified') this.metrics.verdicts.inc({ verdict: 'verified' });
      if (e.type === 'provider.claim.mismatched') this.metrics.verdicts.inc({ verdict: 'mismatched' });
    }
    return domainEvents.length > 0;
  }

  /** The edge declined the request (its own policy, busy): it fails without costing reliability. */
  async recordDecline(providerId: string, requestId: string, detail: string): Promise<void> {
    await this.decide({ type: 'RecordDecline', providerId, requestId, at: this.now(), detail });
  }

  /** Fails the request if no report came by its deadline. */
  async expire(providerId: string, requestId: string, tx: Tx): Promise<void> {
    await this.decide({ type: 'ExpireRequest', providerId, requestId, at: this.now() }, {}, tx);
  }

  /**
   * Metadata: what caused the command. A reply's or a timer's decision names none: it keeps the
   * stream's correlation and names the command as the cause.
   */
  private decide(command: ProviderBenchmarkCommand, metadata: CommandMetadata = {}, tx?: Tx) {
    return this.handler.handle(
      streamIdOf('benchmarking-provider', command.providerId),
      command,
      metadata,
      tx,
    );
  }

  private now(): string {
    return this.eventing.clock.now().toISOString();
  }
}
