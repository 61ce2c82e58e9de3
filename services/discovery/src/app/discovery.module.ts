import {
  type Clock,
  createRegistry,
  DeadLettersStream,
  EdgeStream,
  FindCandidates,
  MessageDeadLettered,
  type MessageRegistry,
  providerCatalog,
  providerStreams,
  systemClock,
} from '@gpunet/contracts';
import {
  connectNats,
  Database,
  DurableConsumer,
  ensureStreams,
  eventingMetrics,
  EventingRuntime,
  type NatsHandle,
  OutboxRelay,
  PostgresEventStore,
  serveQuery,
} from '@gpunet/eventing';
import type { Registry } from '@gpunet/telemetry';
import { nkeyAuthenticator, type Subscription } from '@nats-io/nats-core';
import { type DynamicModule, Module } from '@nestjs/common';
import type { CandidateRequest } from '../domain/candidate.filter';
import { discoveryMigrations } from '../infra/discovery.migrations';
import { CandidateCache } from './candidates.service';
import type { DiscoveryConfig } from './discovery.config';
import { type DiscoveryMetrics, discoveryMetrics } from './discovery.metrics';
import { edgeReportMessages, handleEdgeReport, ProviderCommands } from './edge-reports.handler';
import { HeartbeatIngest } from './heartbeat.ingest';
import { LivenessMonitor, type SweepResult } from './liveness.monitor';

/** Injection token of the running discovery service. */
export const DISCOVERY_RUNTIME = Symbol('gpunet.discovery.runtime');

export interface DiscoveryModuleOptions {
  readonly config: DiscoveryConfig;
  /** Liveness time; tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: Clock;
  /** The service's metrics registry (from `SERVICE_CONTEXT`). */
  readonly metrics: Registry;
  readonly onError?: (error: unknown, context: string) => void;
  /** Consumer batch size (tests lower it). Default 128. */
  readonly batchSize?: number;
}

/** Every message discovery understands. */
export const discoveryRegistry = (): MessageRegistry =>
  createRegistry([MessageDeadLettered, ...providerCatalog]);

/** The name of discovery's durable consumer of edge reports. */
export const EDGE_REPORTS_CONSUMER = 'discovery-edge-reports';

/**
 * Discovery, assembled: its database (event store, outbox, inbox, projection), its NATS connection
 * (with its own user's nkey when configured), the edge-report consumer, the outbox relay, the
 * heartbeat ingest, the liveness sweeps and the candidate query. Nest calls the lifecycle hooks.
 */
export class DiscoveryRuntime {
  private querySubscription: Subscription | undefined;

  private constructor(
    readonly config: DiscoveryConfig,
    readonly db: Database,
    readonly nats: NatsHandle,
    readonly registry: MessageRegistry,
    readonly metrics: DiscoveryMetrics,
    readonly eventing: EventingRuntime,
    readonly ingest: HeartbeatIngest,
    readonly monitor: LivenessMonitor,
    readonly candidates: CandidateCache,
    private readonly clock: Clock,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  static async create(options: DiscoveryModuleOptions): Promise<DiscoveryRuntime> {
    const { config } = options;
    const clock = options.clock ?? systemClock;
    const onError = options.onError ?? (() => undefined);
    const registry = discoveryRegistry();
    const metrics = discoveryMetrics(options.metrics);
    const pipeline = eventingMetrics(options.metrics);
    const db = await new Database({
      url: config.databaseUrl,
      schema: config.schema,
      migrations: discoveryMigrations,
      applicationName: 'discovery',
    }).open();
    let nats: NatsHandle;
    try {
      nats = await connectNats({
        servers: config.natsUrl,
        name: 'discovery',
        ...(config.natsSeed
          ? { authenticator: nkeyAuthenticator(new TextEncoder().encode(config.natsSeed)) }
          : {}),
      });
      await ensureStreams(nats.jsm, [DeadLettersStream, ...providerStreams], config.prefix);
    } catch (error) {
      await db.close();
      throw error;
    }
    const store = new PostgresEventStore(db, registry, config.prefix);
    const candidates = new CandidateCache({ db, nc: nats.nc, prefix: config.prefix, onError });
    const commands = new ProviderCommands(store, registry, clock, (ids) => void candidates.refresh(ids));
    const consumer = new DurableConsumer({
      name: EDGE_REPORTS_CONSUMER,
      stream: EdgeStream,
      messages: edgeReportMessages,
      handle: handleEdgeReport({ commands, clock, metrics, prefix: config.prefix }),
      registry,
      db,
      ...nats,
      prefix: config.prefix,
      metrics: pipeline,
      onError,
      ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    });
    const relay = new OutboxRelay({ db, js: nats.js, channel: store.channel, metrics: pipeline, onError });
    const ingest = new HeartbeatIngest({
      nc: nats.nc,
      db,
      registry,
      clock,
      metrics,
      prefix: config.prefix,
      flushIntervalMs: config.heartbeatFlushMs,
      onError,
    });
    const monitor = new LivenessMonitor({
      db,
      commands,
      ingest,
      clock,
      metrics,
      windowMs: config.livenessWindowMs,
      intervalMs: config.sweepIntervalMs,
      onError,
      afterChange: (ids) => candidates.refresh(ids),
    });
    return new DiscoveryRuntime(
      config,
      db,
      nats,
      registry,
      metrics,
      new EventingRuntime(db, nats, relay, [consumer]),
      ingest,
      monitor,
      candidates,
      clock,
      onError,
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.candidates.start();
    await this.ingest.start();
    await this.eventing.onApplicationBootstrap();
    this.querySubscription = serveQuery(
      FindCandidates,
      async (request) => {
        const end = this.metrics.candidateQuerySeconds.startTimer();
        try {
          // The page as JSON copied together from the index's per-provider JSON (see CandidateIndex).
          return await Promise.resolve(this.candidates.queryEncoded(request, this.clock.now().getTime()));
        } finally {
          end();
        }
      },
      {
        nc: this.nats.nc,
        prefix: this.config.prefix,
        queue: 'discovery',
        onError: this.onError,
        // A page of 200 providers is ~500 KB: checking it here too cost ~7 ms of the p99 budget
        // (bench/discovery). The index builds it from validated projection rows, the scheduler
        // validates what it receives, and candidate-index.spec checks the output against the schema.
        validateResponses: false,
      },
    );
    this.monitor.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.querySubscription?.unsubscribe();
    this.candidates.stop();
    await this.monitor.stop();
    await this.ingest.stop();
    await this.eventing.beforeApplicationShutdown();
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
    return this.candidates.query(request, this.clock.now().getTime());
  }
}

@Module({})
export class DiscoveryModule {
  static forRoot(options: DiscoveryModuleOptions): DynamicModule {
    return {
      module: DiscoveryModule,
      providers: [{ provide: DISCOVERY_RUNTIME, useFactory: () => DiscoveryRuntime.create(options) }],
      exports: [DISCOVERY_RUNTIME],
    };
  }
}
