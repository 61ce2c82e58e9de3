import {
  type BenchmarkProfile,
  type BenchmarkReply,
  buildEnvelope,
  type Clock,
  createRegistry,
  EdgeBenchmarkReported,
  EdgeLinksProbed,
  type LinkProbeResult,
  type PayloadOf,
  ProbeLinksOnEdge,
  RunBenchmarkOnEdge,
  signingInput,
  systemClock,
} from '@gpunet/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { probeLink } from '../infra/link-prober';

export type BenchmarkRequest = PayloadOf<typeof RunBenchmarkOnEdge>;
export type ProbeRequest = PayloadOf<typeof ProbeLinksOnEdge>;
type ReportDef = typeof EdgeBenchmarkReported | typeof EdgeLinksProbed;
type SignedKeys = 'edgeId' | 'publicKey' | 'sequence' | 'signedAt' | 'signature';

/** The report fields an agent supplies; the reporter adds identity, sequence, time and signature. */
export type ReportFields<D extends ReportDef> = Omit<PayloadOf<D>, SignedKeys>;

/** Signs and publishes one report of this edge (provider-edge passes its own, with its persisted sequence). */
export type Reporter = <D extends ReportDef>(def: D, fields: ReportFields<D>) => Promise<void>;

export interface SignedReporterOptions {
  readonly edgeId: string;
  readonly js: JetStreamClient;
  /** ed25519 signature (base64url) of the text, by the edge's key. */
  readonly sign: (input: string) => string;
  /** The next report sequence: must grow across restarts (provider-edge persists it). */
  readonly nextSequence: () => number;
  readonly prefix?: string;
  readonly clock?: Clock;
}

/** A `Reporter` that signs like every edge report (canonical JSON of type, version, payload) and publishes to JetStream. */
export const signedReporter =
  (options: SignedReporterOptions): Reporter =>
  async (def, fields) => {
    const now = (options.clock ?? systemClock).now();
    const unsigned = {
      edgeId: options.edgeId,
      publicKey: options.edgeId,
      sequence: options.nextSequence(),
      signedAt: now.toISOString(),
      ...fields,
    } as Record<string, unknown>;
    const signature = options.sign(signingInput(def, unsigned));
    const envelope = buildEnvelope(def, { ...unsigned, signature } as never, {
      streamId: `edge-${options.edgeId}`,
      occurredAt: now,
    });
    await options.js.publish(
      def.subject({ edgeId: options.edgeId }, options.prefix ?? ''),
      JSON.stringify(envelope),
      {
        msgID: envelope.eventId,
      },
    );
  };

export interface EdgeBenchmarkAgentOptions {
  readonly edgeId: string;
  readonly nc: NatsConnection;
  /** Subject namespace (tests). Default ''. */
  readonly prefix?: string;
  /** Measures the host: `runTorchBenchmark`, or `simulatedProfile` on a simulated edge. */
  readonly benchmark: (request: BenchmarkRequest) => Promise<BenchmarkProfile>;
  /** Probes the requested peers. Default: `probeLink` to each target in turn. */
  readonly probe?: (request: ProbeRequest) => Promise<LinkProbeResult[]>;
  /** Whether a job holds this host's GPUs now. */
  readonly isBusy: () => boolean;
  /** The provider's policy lets benchmarks and probes run during jobs (when the request allows it too). Default false. */
  readonly policyAllowsWhileBusy?: boolean;
  readonly report: Reporter;
  readonly clock?: Clock;
  readonly onError?: (error: unknown, context: string) => void;
}

const commands = createRegistry([RunBenchmarkOnEdge, ProbeLinksOnEdge]);

/** Probes every target in turn (one transfer at a time from this host). */
export const probeTargets = async (request: ProbeRequest): Promise<LinkProbeResult[]> => {
  const results: LinkProbeResult[] = [];
  for (const target of request.targets) results.push(await probeLink(target, request));
  return results;
};

/**
 * The edge side of benchmarking: answers `cmd.edge.{edgeId}.benchmark.v1` and `…probe-links.v1` at
 * once (accepted, or declined when busy, already running or off contract), runs the work, then
 * publishes the signed result (`edge.benchmark-reported`, `edge.links-probed`). One benchmark and one
 * probe run at a time. provider-edge mounts it beside its reservation handling; tests run it alone.
 */
export class EdgeBenchmarkAgent {
  private subscriptions: Subscription[] = [];
  private benchmarking = false;
  private probing = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: EdgeBenchmarkAgentOptions) {}

  start(): void {
    const prefix = this.options.prefix ?? '';
    const edgeId = this.options.edgeId;
    this.subscriptions = [
      this.options.nc.subscribe(RunBenchmarkOnEdge.subject({ edgeId }, prefix), {
        callback: (_e, m) => this.onCommand(m),
      }),
      this.options.nc.subscribe(ProbeLinksOnEdge.subject({ edgeId }, prefix), {
        callback: (_e, m) => this.onCommand(m),
      }),
    ];
  }

  /** Stops answering and waits for running work to report. */
  async stop(): Promise<void> {
    for (const s of this.subscriptions) s.unsubscribe();
    this.subscriptions = [];
    await Promise.allSettled([...this.inFlight]);
  }

  /** Settles when the work accepted so far has reported (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private onCommand(msg: Msg): void {
    let envelope;
    try {
      envelope = commands.parse(msg.json());
    } catch (error) {
      this.reply(msg, {
        requestId: 'unknown',
        outcome: 'declined',
        reason: { code: 'INVALID_REQUEST', message: String(error).slice(0, 512) },
      });
      return;
    }
    const data = envelope.data;
    const busy =
      this.options.isBusy() && !(data.allowWhileBusy && this.options.policyAllowsWhileBusy === true);
    const isBenchmark = envelope.type === RunBenchmarkOnEdge.type;
    if (busy) {
      this.reply(msg, {
        requestId: data.requestId,
        outcome: 'declined',
        reason: {
          code: 'BUSY',
          message: 'a job holds this host; the policy keeps benchmarks and probes off it',
        },
      });
      return;
    }
    if (isBenchmark ? this.benchmarking : this.probing) {
      this.reply(msg, {
        requestId: data.requestId,
        outcome: 'declined',
        reason: {
          code: 'ALREADY_RUNNING',
          message: `a ${isBenchmark ? 'benchmark' : 'probe run'} is running`,
        },
      });
      return;
    }
    this.reply(msg, { requestId: data.requestId, outcome: 'accepted' });
    const work = isBenchmark
      ? this.runBenchmark(envelope.data as BenchmarkRequest)
      : this.runProbes(envelope.data as ProbeRequest);
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private async runBenchmark(request: BenchmarkRequest): Promise<void> {
    this.benchmarking = true;
    try {
      let fields: ReportFields<typeof EdgeBenchmarkReported>;
      try {
        const profile = await this.options.benchmark(request);
        fields = { requestId: request.requestId, outcome: 'completed', profile, error: null };
      } catch (error) {
        const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        fields = {
          requestId: request.requestId,
          outcome: 'failed',
          profile: null,
          error: text.slice(0, 2048),
        };
      }
      await this.options.report(EdgeBenchmarkReported, fields);
    } catch (error) {
      this.options.onError?.(error, 'benchmark report');
    } finally {
      this.benchmarking = false;
    }
  }

  private async runProbes(request: ProbeRequest): Promise<void> {
    this.probing = true;
    try {
      const results = await (this.options.probe ?? probeTargets)(request);
      await this.options.report(EdgeLinksProbed, {
        requestId: request.requestId,
        probedAt: (this.options.clock ?? systemClock).now().toISOString(),
        results,
      });
    } catch (error) {
      this.options.onError?.(error, 'link probes');
    } finally {
      this.probing = false;
    }
  }

  private reply(msg: Msg, reply: BenchmarkReply): void {
    if (msg.reply) msg.respond(JSON.stringify(reply));
  }
}
