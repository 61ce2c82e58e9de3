import { originOf, ProbeLinksOnEdge } from '@gpunet/contracts';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { mulberry32, pairKey } from '@gpunet/netcoord';
import { Inject, Injectable } from '@nestjs/common';
import {
  type ProbeBoundsConfig,
  planProbeRounds,
  type ProbeHost,
  type ProbeRound,
  suspectedLanPairs,
} from '../domain/probe-plan';
import { sendEdgeCommand } from '../infra/edge-commands';
import { linkMeasuredTimes, loadCoordinates } from '../infra/links.repository';
import {
  markProbeUnreported,
  pendingProbeCount,
  probeCycleOutcomes,
  recordProbeRequests,
} from '../infra/probe-requests.repository';
import { onlineProviders } from '../infra/providers.repository';
import type { BenchmarkingConfig } from './benchmarking.config';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { BENCHMARKING_CONFIG, BENCHMARKING_METRICS, BENCHMARKING_RANDOM } from './benchmarking.tokens';
import { PeriodicTask } from './periodic-task';

export interface ProbeCycleResult {
  readonly cycle: string;
  readonly rounds: number;
  readonly requests: number;
  readonly reported: number;
  readonly declined: number;
  readonly unanswered: number;
}

/** Longest real-time wait between two looks at a round's reports, ms. */
const POLL_MS = 250;

/** How long a round may take on the edges: every target's echoes and transfer, plus slack. */
const roundBudgetMs = (round: ProbeRound, bounds: ProbeBoundsConfig): number =>
  Math.max(
    ...round.requests.map((q) =>
      q.request.targets.reduce(
        (sum, t) =>
          sum +
          q.request.rttSamples * q.request.rttTimeoutMs +
          (t.throughput ? 2 * bounds.throughputMaxMs + 1_000 : 0),
        0,
      ),
    ),
  ) + 5_000;

/**
 * Network probe cycles (every `probeIntervalMs`, or `run()`): the online hosts with a probe
 * endpoint, a bounded sample of peers each (`planProbeRounds`), dispatched round by round — a round's
 * requests go out together and the next round starts when every accepted request has reported (or
 * the round's time budget is spent), so throughput transfers of different rounds never overlap.
 * Reports come back through the edge-report consumer, which accepts only the requests recorded here.
 * A shutdown stops a cycle between rounds, without waiting for the reports.
 */
@Injectable()
export class ProbeCycle extends PeriodicTask<ProbeCycleResult> {
  private readonly bounds: ProbeBoundsConfig;
  private cycles = 0;
  private stopping = false;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(BENCHMARKING_CONFIG) private readonly config: BenchmarkingConfig,
    @Inject(BENCHMARKING_RANDOM) private readonly random: () => number,
    @Inject(BENCHMARKING_METRICS) private readonly metrics: BenchmarkingMetrics,
  ) {
    super({ intervalMs: config.probeIntervalMs, onError: (e) => eventing.onError(e, 'probe cycle') });
    this.bounds = {
      rttSamples: config.rttSamples,
      rttTimeoutMs: config.rttTimeoutMs,
      throughputMaxBytes: config.throughputMaxBytes,
      throughputMaxMs: config.throughputMaxMs,
    };
  }

  /**
   * Stops the timer and the cycle in flight between its rounds. The consumers have stopped by now:
   * no report of its round can arrive to wait for.
   */
  override beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    return super.beforeApplicationShutdown();
  }

  /** One cycle now; a cycle asked for while one runs is that one. */
  run(): Promise<ProbeCycleResult> {
    return this.runNow();
  }

  protected override async runOnce(): Promise<ProbeCycleResult> {
    const { db, clock } = this.eventing;
    const { config } = this;
    const end = this.metrics.probeCycleSeconds.startTimer();
    const now = clock.now();
    const cycle = `c${now.getTime().toString(36)}${(this.cycles++).toString(36)}`;
    const hosts: ProbeHost[] = (await onlineProviders(db)).map((p) => ({
      id: p.providerId,
      endpoints: p.addresses
        .filter((address) => config.probeLoopback || !address.startsWith('127.'))
        .slice(0, 8)
        .map((address) => ({ address, udpPort: config.probeUdpPort, tcpPort: config.probeTcpPort })),
      busy: p.busy,
    }));
    const lastMeasured = new Map<string, number>();
    for (const m of await linkMeasuredTimes(db)) {
      const key = pairKey(m.a, m.b);
      lastMeasured.set(key, Math.max(lastMeasured.get(key) ?? 0, m.measuredAtMs));
    }
    const suspected = suspectedLanPairs(
      await loadCoordinates(db),
      new Set(lastMeasured.keys()),
      config.lanRttUs,
    );
    const rounds = planProbeRounds(hosts, {
      prefer: (a, b) => suspected.has(pairKey(a, b)),
      k: config.probePeers,
      throughputPerHost: config.throughputPeers,
      rng: mulberry32(Math.floor(this.random() * 2 ** 32)),
      lastMeasured,
      bounds: this.bounds,
      allowWhileBusy: config.allowWhileBusy,
      idPrefix: cycle,
    });
    let requests = 0;
    let declined = 0;
    for (const round of rounds) {
      if (this.stopping) break;
      await db.transaction((tx) =>
        recordProbeRequests(
          tx,
          cycle,
          round.requests.map((q) => ({
            requestId: q.request.requestId,
            prober: q.prober,
            peers: q.request.targets.map((t) => t.peerId),
          })),
          clock.now().toISOString(),
        ),
      );
      const answers = await Promise.all(
        round.requests.map((q) =>
          // Each request starts a chain: its id is the correlation of what it causes.
          sendEdgeCommand(this.eventing.client, ProbeLinksOnEdge, q.prober, q.request, {
            cause: originOf(q.request.requestId),
            timeoutMs: config.commandTimeoutMs,
          }),
        ),
      );
      const waiting: string[] = [];
      for (const a of answers) {
        this.metrics.commands.inc({ kind: 'probe', answer: a.outcome });
        requests++;
        if (a.outcome === 'accepted') waiting.push(a.requestId);
        else {
          if (a.outcome === 'declined') declined++;
          await markProbeUnreported(db, a.requestId, a.outcome);
        }
      }
      await this.waitForReports(waiting, roundBudgetMs(round, this.bounds));
    }
    const outcomes = await probeCycleOutcomes(db, cycle);
    end();
    return { cycle, rounds: rounds.length, requests, declined, ...outcomes };
  }

  /** Real time: the reports arrive through the consumer, possibly on another replica. */
  private async waitForReports(requestIds: readonly string[], budgetMs: number): Promise<void> {
    if (requestIds.length === 0) return;
    const deadline = Date.now() + budgetMs;
    let delay = 20;
    for (;;) {
      const open = await pendingProbeCount(this.eventing.db, requestIds);
      if (open === 0 || this.stopping || Date.now() >= deadline) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, POLL_MS);
    }
  }
}
