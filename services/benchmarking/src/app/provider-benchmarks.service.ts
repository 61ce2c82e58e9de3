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
import {
  type CommitmentAnswer,
  type GpuChallengeCommand,
  type GpuChallengeEvent,
  type OpeningVerdict,
  PRIVATE_CHALLENGE_EVENTS,
} from '../domain/gpu-challenge';
import { projectBenchmarkEvents } from '../infra/benchmark-state.repository';
import { projectChallengeDecision } from '../infra/challenges.repository';
import { loadClaim } from '../infra/providers.repository';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { BENCHMARKING_METRICS } from './benchmarking.tokens';

const CHALLENGE_EVENTS: ReadonlySet<string> = new Set<GpuChallengeEvent['type']>([
  'challenge.issued',
  'challenge.committed',
  'provider.challenged',
  'gpu.verification-changed',
]);

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
      publishes: (e) => !PRIVATE_CHALLENGE_EVENTS.has(e.type),
      // Spot checks make a provider's stream long; raise the format whenever the state's shape changes.
      snapshots: { format: 1 },
      effects: async ({ tx, events, command, after }) => {
        await projectBenchmarkEvents(tx, events);
        await projectChallengeDecision(
          tx,
          command.providerId,
          events.filter((e): e is GpuChallengeEvent => CHALLENGE_EVENTS.has(e.type)),
          after.challenges,
        );
      },
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
   * Discovery announced the provider or a changed claim: its GPUs become `pending` (to be challenged)
   * or, for a simulated edge, `simulated` (never challenged); an unchanged claim changes nothing.
   */
  async registerGpus(
    providerId: string,
    simulated: boolean,
    gpuUuids: readonly string[],
    cause: Causation,
    tx: Tx,
  ): Promise<void> {
    await this.decide({ type: 'RegisterGpus', providerId, at: this.now(), simulated, gpuUuids }, cause, tx);
  }

  /**
   * Records a challenge about to go out (it starts its own correlation). Returns the
   * `challenge.issued` event as stored, or undefined when one is already out or the GPU is not
   * challengeable.
   */
  async issueChallenge(
    providerId: string,
    challenge: Extract<GpuChallengeCommand, { type: 'IssueChallenge' }>['challenge'],
    tx: Tx,
  ): Promise<StoredEvent | undefined> {
    const { events } = await this.decide(
      { type: 'IssueChallenge', providerId, at: this.now(), challenge },
      originOf(challenge.challengeId),
      tx,
    );
    return events[0];
  }

  /** The edge's answer to a challenge (timed by the caller on the verifier's monotonic clock). */
  async recordCommitment(
    providerId: string,
    challengeId: string,
    answer: CommitmentAnswer,
    bytes: { bytesSent: number; bytesReceived: number },
  ): Promise<{ committed: boolean }> {
    const { domainEvents } = await this.decide({
      type: 'RecordCommitment',
      providerId,
      challengeId,
      at: this.now(),
      answer,
      ...bytes,
    });
    this.count(domainEvents);
    return { committed: domainEvents.some((e) => e.type === 'challenge.committed') };
  }

  /** The check of the edge's opening ends the challenge. */
  async recordOpening(
    providerId: string,
    challengeId: string,
    openedRows: readonly number[],
    verdict: OpeningVerdict,
    bytes: { bytesSent: number; bytesReceived: number },
  ): Promise<void> {
    const { domainEvents } = await this.decide({
      type: 'RecordOpening',
      providerId,
      challengeId,
      at: this.now(),
      openedRows,
      verdict,
      ...bytes,
    });
    this.count(domainEvents);
  }

  /** Decides a challenge still out past its time `no-answer` (a restart lost it, or the edge never answered). */
  async expireChallenge(providerId: string, challengeId: string, tx: Tx): Promise<void> {
    const { domainEvents } = await this.decide(
      { type: 'ExpireChallenge', providerId, challengeId, at: this.now() },
      {},
      tx,
    );
    this.count(domainEvents);
  }

  private count(events: readonly ProviderBenchmarkEvent[]): void {
    for (const e of events)
      if (e.type === 'provider.challenged')
        this.metrics.verdicts.inc({ verdict: `challenge-${e.data.outcome}` });
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
