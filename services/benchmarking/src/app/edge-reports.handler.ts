import {
  type Clock,
  EdgeBenchmarkReported,
  EdgeLinksProbed,
  type Envelope,
  type MessageRegistry,
  type PayloadOf,
} from '@gpunet/contracts';
import {
  type Database,
  type HandlerContext,
  PermanentHandlerError,
  type PostgresEventStore,
  type Tx,
} from '@gpunet/eventing';
import { mulberry32, seedOf } from '@gpunet/netcoord';
import { linkMeasurements } from '../domain/links';
import { estimateNetwork } from '../domain/network-estimate';
import { liveLinks, loadClaim, loadCoordinates, writeCoordinates } from '../infra/projections';
import { edgeIdOfSubject, verifyEdgeReport } from '@gpunet/contracts';
import type { ProviderBenchmarkCommands } from './benchmark.commands';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { recordLinks } from './links.recorder';

/** The signed reports benchmarking consumes from `EDGE_BENCHMARKS`. */
export const edgeReportMessages = [EdgeBenchmarkReported, EdgeLinksProbed] as const;

/** A signed report that did not verify. Dead-lettered at once, with the reason, and counted. */
export class EdgeReportRejectedError extends PermanentHandlerError {
  constructor(reason: string, subject: string) {
    super('EDGE_REPORT_REJECTED', `edge report on ${subject} refused: ${reason}`);
  }
}

export interface EdgeReportDeps {
  readonly commands: ProviderBenchmarkCommands;
  readonly store: PostgresEventStore;
  readonly registry: MessageRegistry;
  readonly clock: Clock;
  readonly metrics: BenchmarkingMetrics;
  readonly prefix: string;
  readonly linkTtlMs: number;
  readonly lanRttUs: number;
  /** Called after a transaction that recorded links committed. */
  readonly onLinksChanged: () => void;
}

const kindOf = (type: string) => (type === EdgeBenchmarkReported.type ? 'benchmark' : 'links');

/**
 * Applies one edge report in the consumer's transaction: its signature and subject are checked
 * (refused ones are dead-lettered), a benchmark report is verified against the provider's claim by
 * its decider, a link report — only for a probe request benchmarking sent to that edge, only for the
 * peers it named — becomes `link.measured` events and projection rows, and after commit the
 * coordinates are refitted (coalesced: one fit for many reports).
 */
export const handleEdgeReport =
  (deps: EdgeReportDeps) =>
  async (envelope: Envelope, context: HandlerContext): Promise<void> => {
    const kind = kindOf(envelope.type);
    const def = envelope.type === EdgeBenchmarkReported.type ? EdgeBenchmarkReported : EdgeLinksProbed;
    const data = envelope.data as PayloadOf<typeof EdgeLinksProbed> | PayloadOf<typeof EdgeBenchmarkReported>;
    const failure = verifyEdgeReport(def, edgeIdOfSubject(context.subject, deps.prefix), data);
    if (failure !== null) {
      deps.metrics.reports.inc({ kind, result: `rejected-${failure}` });
      throw new EdgeReportRejectedError(failure, context.subject);
    }
    const { tx } = context;
    const applied =
      envelope.type === EdgeBenchmarkReported.type
        ? await applyBenchmark(deps, tx, envelope, data as PayloadOf<typeof EdgeBenchmarkReported>)
        : await applyLinks(deps, tx, envelope, data as PayloadOf<typeof EdgeLinksProbed>);
    deps.metrics.reports.inc({ kind, result: applied ? 'applied' : 'ignored' });
    if (applied && kind === 'links') tx.onCommit(() => deps.onLinksChanged());
  };

const applyBenchmark = async (
  deps: EdgeReportDeps,
  tx: Tx,
  envelope: Envelope,
  data: PayloadOf<typeof EdgeBenchmarkReported>,
): Promise<boolean> => {
  const claim = await loadClaim(tx, data.edgeId);
  // Benchmarks are only ever requested of providers discovery announced: anything else is unsolicited.
  if (claim === null) return false;
  const events = await deps.commands.run(
    {
      type: 'RecordReport',
      providerId: data.edgeId,
      requestId: data.requestId,
      at: deps.clock.now().toISOString(),
      outcome: data.outcome,
      profile: data.profile,
      error: data.error,
      claim,
    },
    { correlationId: envelope.correlationId, causationId: envelope.eventId },
    tx,
  );
  for (const e of events) {
    if (e.type === 'provider.claim.verified') deps.metrics.verdicts.inc({ verdict: 'verified' });
    if (e.type === 'provider.claim.mismatched') deps.metrics.verdicts.inc({ verdict: 'mismatched' });
  }
  return events.length > 0;
};

const applyLinks = async (
  deps: EdgeReportDeps,
  tx: Tx,
  envelope: Envelope,
  data: PayloadOf<typeof EdgeLinksProbed>,
): Promise<boolean> => {
  const [request] = await tx.query<{ peers: string[] }>(
    `UPDATE "${tx.schema}".probe_requests SET outcome = 'reported', reported_at = $3
      WHERE request_id = $1 AND prober = $2 AND outcome IN ('pending', 'unanswered') RETURNING peers`,
    [data.requestId, data.edgeId, deps.clock.now().toISOString()],
  );
  if (request === undefined) return false;
  const asked = new Set(request.peers);
  const links = linkMeasurements(
    data.edgeId,
    data.results.filter((r) => asked.has(r.peerId)),
    { measuredAtMs: Date.parse(data.probedAt), ttlMs: deps.linkTtlMs, lanRttUs: deps.lanRttUs },
  );
  if (links.length === 0) return true;
  await recordLinks(deps, tx, links, {
    correlationId: envelope.correlationId,
    causationId: envelope.eventId,
    occurredAt: deps.clock.now().toISOString(),
  });
  return true;
};

/**
 * Refits the coordinates from every live link, starting from the previous ones, in its own
 * transaction. One fit at a time per schema (advisory lock): concurrent fits would start from stale
 * coordinates.
 */
export const refitCoordinates = async (
  db: Database,
  deps: { readonly clock: Clock; readonly lanRttUs: number },
): Promise<number> =>
  db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${tx.schema}.coordinates`]);
    const now = deps.clock.now().toISOString();
    const links = await liveLinks(tx, now);
    const hosts = (
      await tx.query<{ provider_id: string }>(
        `SELECT provider_id FROM "${tx.schema}".providers WHERE status <> 'deregistered'`,
      )
    ).map((r) => r.provider_id);
    const coordinates = estimateNetwork(hosts, links, {
      rng: mulberry32(seedOf(`coordinates:${now}`)),
      previous: await loadCoordinates(tx),
      lanRttUs: deps.lanRttUs,
    });
    await writeCoordinates(tx, coordinates, now);
    return coordinates.length;
  });

/** Runs `refit` after link changes, coalescing the changes that arrive while one runs. */
export class CoordinateRefitter {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly refit: () => Promise<unknown>,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.refit().catch((e: unknown) => this.onError(e, 'coordinate refit'));
      } while (this.again);
    })().finally(() => (this.running = undefined));
  }

  /** Settles when no refit is running or queued. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }
}
