import { type Clock, ProbeLinksOnEdge } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import { mulberry32, pairKey } from '@gpunet/netcoord';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  type ProbeBoundsConfig,
  planProbeRounds,
  type ProbeHost,
  type ProbeRound,
  suspectedLanPairs,
} from '../domain/probe-plan';
import { sendEdgeCommand } from '../infra/edge-commands';
import type { BenchmarkingMetrics } from './benchmarking.metrics';

export interface ProbeCycleDeps {
  readonly db: Database;
  readonly nc: NatsConnection;
  readonly clock: Clock;
  readonly random: () => number;
  readonly metrics: BenchmarkingMetrics;
  readonly prefix: string;
  readonly intervalMs: number;
  readonly k: number;
  readonly throughputPeers: number;
  readonly udpPort: number;
  readonly tcpPort: number;
  /** Keep loopback addresses as endpoints (single-machine tests). */
  readonly loopback: boolean;
  readonly bounds: ProbeBoundsConfig;
  readonly allowWhileBusy: boolean;
  readonly commandTimeoutMs: number;
  /** Same-site threshold, µs (suspected LAN pairs are probed first). */
  readonly lanRttUs: number;
  /** Real-time wait for a round's reports (they arrive through the consumer, possibly on another replica). */
  readonly pollMs?: number;
  readonly onError?: (error: unknown, context: string) => void;
}

export interface ProbeCycleResult {
  readonly cycle: string;
  readonly rounds: number;
  readonly requests: number;
  readonly reported: number;
  readonly declined: number;
  readonly unanswered: number;
}

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
 * One network probe cycle: the online hosts with a probe endpoint, a bounded sample of peers each
 * (`planProbeRounds`), dispatched round by round — a round's requests go out together and the next
 * round starts when every accepted request has reported (or the round's time budget is spent), so
 * throughput transfers of different rounds never overlap. Reports come back through the edge-report
 * consumer, which accepts only the requests recorded here.
 */
export class ProbeCycle {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ProbeCycleResult> | undefined;
  private cycles = 0;

  constructor(private readonly deps: ProbeCycleDeps) {}

  start(): void {
    if (this.deps.intervalMs > 0)
      this.timer = setInterval(() => {
        this.run().catch((e: unknown) => this.deps.onError?.(e, 'probe cycle'));
      }, this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  run(): Promise<ProbeCycleResult> {
    this.running ??= this.runOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runOnce(): Promise<ProbeCycleResult> {
    const { db, clock } = this.deps;
    const end = this.deps.metrics.probeCycleSeconds.startTimer();
    const now = clock.now();
    const cycle = `c${now.getTime().toString(36)}${(this.cycles++).toString(36)}`;
    const rows = await db.query<{ provider_id: string; addresses: string[]; busy: boolean }>(
      `SELECT provider_id, addresses, busy FROM "${db.schema}".providers WHERE status = 'online' ORDER BY provider_id`,
    );
    const hosts: ProbeHost[] = rows.map((r) => ({
      id: r.provider_id,
      endpoints: r.addresses
        .filter((address) => this.deps.loopback || !address.startsWith('127.'))
        .slice(0, 8)
        .map((address) => ({ address, udpPort: this.deps.udpPort, tcpPort: this.deps.tcpPort })),
      busy: r.busy,
    }));
    const measured = await db.query<{ a: string; b: string; measured_at: Date }>(
      `SELECT a, b, measured_at FROM "${db.schema}".links`,
    );
    const lastMeasured = new Map<string, number>();
    for (const m of measured) {
      const key = pairKey(m.a, m.b);
      lastMeasured.set(key, Math.max(lastMeasured.get(key) ?? 0, m.measured_at.getTime()));
    }
    const coordinates = new Map(
      (
        await db.query<{ host_id: string; x: number; y: number; height: number }>(
          `SELECT host_id, x, y, height FROM "${db.schema}".coordinates`,
        )
      ).map((c) => [c.host_id, { x: c.x, y: c.y, height: c.height }]),
    );
    const suspected = suspectedLanPairs(coordinates, new Set(lastMeasured.keys()), this.deps.lanRttUs);
    const rounds = planProbeRounds(hosts, {
      prefer: (a, b) => suspected.has(pairKey(a, b)),
      k: this.deps.k,
      throughputPerHost: this.deps.throughputPeers,
      rng: mulberry32(Math.floor(this.deps.random() * 2 ** 32)),
      lastMeasured,
      bounds: this.deps.bounds,
      allowWhileBusy: this.deps.allowWhileBusy,
      idPrefix: cycle,
    });
    let requests = 0;
    let declined = 0;
    for (const round of rounds) {
      await db.transaction(async (tx) => {
        for (const q of round.requests)
          await tx.execute(
            `INSERT INTO "${tx.schema}".probe_requests (request_id, prober, cycle, peers, issued_at) VALUES ($1, $2, $3, $4, $5)`,
            [
              q.request.requestId,
              q.prober,
              cycle,
              q.request.targets.map((t) => t.peerId),
              clock.now().toISOString(),
            ],
          );
      });
      const answers = await Promise.all(
        round.requests.map((q) =>
          sendEdgeCommand(this.deps.nc, ProbeLinksOnEdge, q.prober, q.request, {
            prefix: this.deps.prefix,
            timeoutMs: this.deps.commandTimeoutMs,
          }),
        ),
      );
      const waiting: string[] = [];
      for (const a of answers) {
        this.deps.metrics.commands.inc({ kind: 'probe', answer: a.outcome });
        requests++;
        if (a.outcome === 'accepted') waiting.push(a.requestId);
        else {
          if (a.outcome === 'declined') declined++;
          await db.execute(
            `UPDATE "${db.schema}".probe_requests SET outcome = $2 WHERE request_id = $1 AND outcome = 'pending'`,
            [a.requestId, a.outcome],
          );
        }
      }
      await this.waitForReports(waiting, roundBudgetMs(round, this.deps.bounds));
    }
    const [counts] = await db.query<{ reported: number; unanswered: number }>(
      `SELECT count(*) FILTER (WHERE outcome = 'reported')::int AS reported,
              count(*) FILTER (WHERE outcome IN ('pending', 'unanswered'))::int AS unanswered
         FROM "${db.schema}".probe_requests WHERE cycle = $1`,
      [cycle],
    );
    end();
    return {
      cycle,
      rounds: rounds.length,
      requests,
      reported: counts?.reported ?? 0,
      declined,
      unanswered: counts?.unanswered ?? 0,
    };
  }

  private async waitForReports(requestIds: readonly string[], budgetMs: number): Promise<void> {
    if (requestIds.length === 0) return;
    const deadline = Date.now() + budgetMs;
    let delay = 20;
    for (;;) {
      const [row] = await this.deps.db.query<{ open: number }>(
        `SELECT count(*)::int AS open FROM "${this.deps.db.schema}".probe_requests
          WHERE request_id = ANY($1) AND outcome = 'pending'`,
        [requestIds],
      );
      if ((row?.open ?? 0) === 0 || Date.now() >= deadline) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, this.deps.pollMs ?? 250);
    }
  }
}
