import {
  benchmarkingCatalog,
  benchmarkingStreams,
  type Clock,
  createRegistry,
  DeadLettersStream,
  DiscoveryStream,
  EdgeBenchmarkStream,
  ExecutionStream,
  FindGpuProfiles,
  FindReliability,
  GetNetworkEstimate,
  MessageDeadLettered,
  type MessageRegistry,
  providerCatalog,
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
import { benchmarkingMigrations } from '../infra/benchmarking.migrations';
import { discoveryMessages } from '../infra/projections';
import { findGpuProfiles, findReliability, getNetworkEstimate } from '../infra/readers';
import { ProviderBenchmarkCommands } from './benchmark.commands';
import { BenchmarkScheduler, type SweepResult } from './benchmark.scheduler';
import type { BenchmarkingConfig } from './benchmarking.config';
import { type BenchmarkingMetrics, benchmarkingMetrics } from './benchmarking.metrics';
import { handleDiscoveryEvent } from './discovery-events.handler';
import {
  CoordinateRefitter,
  edgeReportMessages,
  handleEdgeReport,
  refitCoordinates,
} from './edge-reports.handler';
import { handleJobOverlayEvent, jobOverlayMessages } from './job-overlays.handler';
import { ProbeCycle, type ProbeCycleResult } from './probe.cycle';

/** Injection token of the running benchmarking service. */
export const BENCHMARKING_RUNTIME = Symbol('gpunet.benchmarking.runtime');

export interface BenchmarkingModuleOptions {
  readonly config: BenchmarkingConfig;
  /** Business time (deadlines, expiry, spot checks); tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: Clock;
  /** Uniform [0, 1) source for spot checks and probe sampling; tests pass a seeded one. Default `Math.random`. */
  readonly random?: () => number;
  /** The service's metrics registry (from `SERVICE_CONTEXT`). */
  readonly metrics: Registry;
  readonly onError?: (error: unknown, context: string) => void;
  /** Consumer batch size (tests lower it). Default 128. */
  readonly batchSize?: number;
}

/** Every message benchmarking understands. */
export const benchmarkingRegistry = (): MessageRegistry =>
  createRegistry([MessageDeadLettered, ...providerCatalog, ...benchmarkingCatalog, ...jobOverlayMessages]);

export const DISCOVERY_CONSUMER = 'benchmarking-discovery';
export const EDGE_REPORTS_CONSUMER = 'benchmarking-edge-reports';
export const JOB_OVERLAYS_CONSUMER = 'benchmarking-job-overlays';

/**
 * Benchmarking, assembled: its database (event store, outbox, inbox, projections), NATS, the three
 * consumers (discovery's provider events → claims view; edges' signed reports → verification and
 * links; execution's launches and jobs' overlay path reports → overlay links), the outbox relay, the benchmark scheduler, the probe cycle, the coordinate refitter and
 * the three queries the scheduler reads. Nest calls the lifecycle hooks.
 */
export class BenchmarkingRuntime {
  private subscriptions: Subscription[] = [];

  private constructor(
    readonly config: BenchmarkingConfig,
    readonly db: Database,
    readonly nats: NatsHandle,
    readonly registry: MessageRegistry,
    readonly metrics: BenchmarkingMetrics,
    readonly eventing: EventingRuntime,
    readonly scheduler: BenchmarkScheduler,
    readonly probes: ProbeCycle,
    readonly refitter: CoordinateRefitter,
    private readonly clock: Clock,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  static async create(options: BenchmarkingModuleOptions): Promise<BenchmarkingRuntime> {
    const { config } = options;
    const clock = options.clock ?? systemClock;
    const random = options.random ?? Math.random;
    const onError = options.onError ?? (() => undefined);
    const registry = benchmarkingRegistry();
    const metrics = benchmarkingMetrics(options.metrics);
    const pipeline = eventingMetrics(options.metrics);
    const db = await new Database({
      url: config.databaseUrl,
      schema: config.schema,
      migrations: benchmarkingMigrations,
      applicationName: 'benchmarking',
    }).open();
    let nats: NatsHandle;
    try {
      nats = await connectNats({
        servers: config.natsUrl,
        name: 'benchmarking',
        ...(config.natsSeed
          ? { authenticator: nkeyAuthenticator(new TextEncoder().encode(config.natsSeed)) }
          : {}),
      });
      await ensureStreams(
        nats.jsm,
        // Declared (idempotently) so that benchmarking can start before discovery and execution.
        [DeadLettersStream, DiscoveryStream, ExecutionStream, ...benchmarkingStreams],
        config.prefix,
      );
    } catch (error) {
      await db.close();
      throw error;
    }
    const store = new PostgresEventStore(db, registry, config.prefix);
    const commands = new ProviderBenchmarkCommands(store, registry, clock);
    const refitter = new CoordinateRefitter(
      () => refitCoordinates(db, { clock, lanRttUs: config.lanRttUs }),
      onError,
    );
    const common = {
      registry,
      db,
      ...nats,
      prefix: config.prefix,
      metrics: pipeline,
      onError,
      ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    };
    const consumers = [
      new DurableConsumer({
        name: DISCOVERY_CONSUMER,
        stream: DiscoveryStream,
        messages: discoveryMessages,
        handle: handleDiscoveryEvent,
        ...common,
      }),
      new DurableConsumer({
        name: EDGE_REPORTS_CONSUMER,
        stream: EdgeBenchmarkStream,
        messages: edgeReportMessages,
        handle: handleEdgeReport({
          commands,
          store,
          registry,
          clock,
          metrics,
          prefix: config.prefix,
          linkTtlMs: config.linkTtlMs,
          lanRttUs: config.lanRttUs,
          onLinksChanged: () => refitter.kick(),
        }),
        ...common,
      }),
      new DurableConsumer({
        name: JOB_OVERLAYS_CONSUMER,
        stream: ExecutionStream,
        messages: jobOverlayMessages,
        handle: handleJobOverlayEvent({
          store,
          clock,
          metrics,
          linkTtlMs: config.linkTtlMs,
          lanRttUs: config.lanRttUs,
          onLinksChanged: () => refitter.kick(),
        }),
        ...common,
      }),
    ];
    const relay = new OutboxRelay({ db, js: nats.js, channel: store.channel, metrics: pipeline, onError });
    const scheduler = new BenchmarkScheduler({
      db,
      nc: nats.nc,
      commands,
      clock,
      random,
      metrics,
      prefix: config.prefix,
      policy: {
        renewBeforeMs: config.renewBeforeMs,
        spotCheckProbability: config.spotCheckProbability,
        spotCheckMinIntervalMs: config.spotCheckMinIntervalMs,
        retryAfterMs: Math.min(config.benchmarkTimeoutMs, 600_000),
        maxPerSweep: config.maxRequestsPerSweep,
        allowWhileBusy: config.allowWhileBusy,
      },
      intervalMs: config.sweepIntervalMs,
      timeoutMs: config.benchmarkTimeoutMs,
      maxDurationMs: config.benchmarkMaxDurationMs,
      profileTtlMs: config.profileTtlMs,
      commandTimeoutMs: config.commandTimeoutMs,
      onError,
    });
    const probes = new ProbeCycle({
      db,
      nc: nats.nc,
      clock,
      random,
      metrics,
      prefix: config.prefix,
      intervalMs: config.probeIntervalMs,
      k: config.probePeers,
      throughputPeers: config.throughputPeers,
      udpPort: config.probeUdpPort,
      tcpPort: config.probeTcpPort,
      loopback: config.probeLoopback,
      bounds: {
        rttSamples: config.rttSamples,
        rttTimeoutMs: config.rttTimeoutMs,
        throughputMaxBytes: config.throughputMaxBytes,
        throughputMaxMs: config.throughputMaxMs,
      },
      allowWhileBusy: config.allowWhileBusy,
      commandTimeoutMs: config.commandTimeoutMs,
      lanRttUs: config.lanRttUs,
      onError,
    });
    return new BenchmarkingRuntime(
      config,
      db,
      nats,
      registry,
      metrics,
      new EventingRuntime(db, nats, relay, consumers),
      scheduler,
      probes,
      refitter,
      clock,
      onError,
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.eventing.onApplicationBootstrap();
    const opts = {
      nc: this.nats.nc,
      prefix: this.config.prefix,
      queue: 'benchmarking',
      onError: this.onError,
    };
    this.subscriptions = [
      serveQuery(FindGpuProfiles, (r) => findGpuProfiles(this.db, r, this.clock.now()), opts),
      serveQuery(FindReliability, (r) => findReliability(this.db, r), opts),
      serveQuery(GetNetworkEstimate, (r) => getNetworkEstimate(this.db, r, this.clock.now()), opts),
    ];
    this.scheduler.start();
    this.probes.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const s of this.subscriptions) s.unsubscribe();
    await this.probes.stop();
    await this.scheduler.stop();
    await this.refitter.idle();
    await this.eventing.beforeApplicationShutdown();
  }

  /** One benchmark sweep now (also every `sweepIntervalMs`). */
  sweep(): Promise<SweepResult> {
    return this.scheduler.sweep();
  }

  /** One network probe cycle now (also every `probeIntervalMs`). */
  probeCycle(): Promise<ProbeCycleResult> {
    return this.probes.run();
  }
}

@Module({})
export class BenchmarkingModule {
  static forRoot(options: BenchmarkingModuleOptions): DynamicModule {
    return {
      module: BenchmarkingModule,
      providers: [{ provide: BENCHMARKING_RUNTIME, useFactory: () => BenchmarkingRuntime.create(options) }],
      exports: [BENCHMARKING_RUNTIME],
    };
  }
}
