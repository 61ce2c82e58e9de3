import {
  catalogUpcasters,
  createRegistry,
  DeadLettersStream,
  DiscoveryStream,
  EdgeRanksStream,
  edgeIdOfSubject,
  executionMessages,
  ExecutionStream,
  GatewayStream,
  JobCancelRequested,
  JobPlaced,
  jobMessages,
  JobSubmitted,
  JobSubmittedV1,
  MessageDeadLettered,
  type MessageRegistry,
  newEventId,
  OverlayPathsReported,
  type PayloadOf,
  ProviderInventoryChanged,
  ProviderRegistered,
  RankStatusReported,
  SchedulerStream,
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
} from '@gpunet/eventing';
import { JobOverlayCoordinator, natsEdgeOverlayTransport } from '@gpunet/overlay';
import type { Registry } from '@gpunet/telemetry';
import { nkeyAuthenticator } from '@nats-io/nats-core';
import { type DynamicModule, Module } from '@nestjs/common';
import { classifyStatus } from '../domain/job-execution.decider';
import { executionMigrations } from '../infra/execution.migrations';
import { HostRankNetwork } from '../infra/host-rank-network';
import { natsEdgeCommands } from '../infra/nats-edge-commands';
import { OverlayRankNetwork } from '../infra/overlay-rank-network';
import { PostgresProviderDirectory, recordProvider } from '../infra/provider-directory';
import type { EdgeCommands } from './edge-commands.port';
import type { ExecutionConfig } from './execution.config';
import { executionMetrics } from './execution.metrics';
import { type ExecutionClock, JobProcessManager } from './job-process.manager';
import type { ProviderDirectory } from './provider-directory.port';
import type { RankNetwork } from './rank-network.port';

/**
 * The network of `EXECUTION_NETWORK`: the hosts' own (`HostRankNetwork`), or a job overlay per job
 * (`OverlayRankNetwork`: the coordinator commands the edges over NATS; the job's path report is
 * published on EXECUTION through the outbox, as the job's other events are).
 */
const defaultNetwork = (
  config: ExecutionConfig,
  nats: NatsHandle,
  store: PostgresEventStore,
  directory: ProviderDirectory,
  onError: (error: unknown, context: string) => void,
): RankNetwork => {
  const network = config.network;
  if (network.kind === 'host') return new HostRankNetwork(directory);
  return new OverlayRankNetwork({
    coordinator: new JobOverlayCoordinator({
      transport: natsEdgeOverlayTransport(nats.nc, { prefix: config.prefix }),
    }),
    relays: network.relays,
    signingKey: network.signingKey,
    onError,
    publishReport: async (report) => {
      await store.append(
        `overlay-${report.jobId}`,
        [
          {
            eventId: newEventId(),
            type: OverlayPathsReported.type,
            version: OverlayPathsReported.version,
            data: report,
            occurredAt: new Date().toISOString(),
            correlationId: report.jobId,
            causationId: null,
          },
        ],
        { expectedVersion: 'any' },
      );
    },
  });
};

/** Injection token of the running execution service. */
export const EXECUTION_RUNTIME = Symbol('gpunet.execution.runtime');

export interface ExecutionModuleOptions {
  readonly config: ExecutionConfig;
  /** Deadlines and timestamps; tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: ExecutionClock;
  readonly metrics: Registry;
  readonly onError?: (error: unknown, context: string) => void;
  /** Where ranks find each other. Default: host networking (`HostRankNetwork`). */
  readonly network?: (directory: ProviderDirectory) => RankNetwork;
  /** Replaces the edge command port (tests). */
  readonly edges?: (defaults: EdgeCommands) => EdgeCommands;
}

/** Every message execution reads or writes. */
export const executionRegistry = (): MessageRegistry =>
  createRegistry(
    [
      MessageDeadLettered,
      ...jobMessages,
      ...executionMessages,
      JobPlaced,
      ProviderRegistered,
      ProviderInventoryChanged,
      OverlayPathsReported,
    ],
    catalogUpcasters,
  );

export const GATEWAY_CONSUMER = 'execution-gateway';
export const PLACEMENTS_CONSUMER = 'execution-placements';
export const RANKS_CONSUMER = 'execution-rank-status';
export const PROVIDERS_CONSUMER = 'execution-providers';

const systemExecutionClock: ExecutionClock = {
  now: () => systemClock.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/**
 * Execution, assembled: its database (job log, event store, outbox, inbox), NATS, four durable
 * consumers (submissions and cancel requests; placements; rank statuses; providers' addresses and
 * GPU models), the outbox relay that publishes the job's public events on EXECUTION, and the
 * process manager that drives the edges.
 */
export class ExecutionRuntime {
  private constructor(
    readonly config: ExecutionConfig,
    readonly db: Database,
    readonly nats: NatsHandle,
    readonly store: PostgresEventStore,
    readonly manager: JobProcessManager,
    readonly eventing: EventingRuntime,
  ) {}

  static async create(options: ExecutionModuleOptions): Promise<ExecutionRuntime> {
    const { config } = options;
    const clock = options.clock ?? systemExecutionClock;
    const onError = options.onError ?? (() => undefined);
    const registry = executionRegistry();
    const pipeline = eventingMetrics(options.metrics);
    const metrics = executionMetrics(options.metrics);
    const db = await new Database({
      url: config.databaseUrl,
      schema: config.schema,
      migrations: executionMigrations,
      applicationName: 'execution',
    }).open();
    let nats: NatsHandle;
    try {
      nats = await connectNats({
        servers: config.natsUrl,
        name: 'execution',
        ...(config.natsSeed
          ? { authenticator: nkeyAuthenticator(new TextEncoder().encode(config.natsSeed)) }
          : {}),
      });
      await ensureStreams(
        nats.jsm,
        [
          DeadLettersStream,
          GatewayStream,
          SchedulerStream,
          EdgeRanksStream,
          DiscoveryStream,
          ExecutionStream,
        ],
        config.prefix,
      );
    } catch (error) {
      await db.close();
      throw error;
    }
    const store = new PostgresEventStore(db, registry, config.prefix);
    const directory = new PostgresProviderDirectory(db);
    const defaultEdges = natsEdgeCommands({
      nc: nats.nc,
      prefix: config.prefix,
      timeoutMs: config.edgeTimeoutMs,
    });
    const manager = new JobProcessManager({
      db,
      store,
      registry,
      clock,
      policy: config.policy,
      edges: options.edges ? options.edges(defaultEdges) : defaultEdges,
      network: options.network
        ? options.network(directory)
        : defaultNetwork(config, nats, store, directory, onError),
      directory,
      metrics,
      tickMs: config.tickMs,
      stopGraceMs: config.stopGraceMs,
      onError,
    });
    const common = { registry, db, ...nats, prefix: config.prefix, metrics: pipeline, onError };
    const consumers = [
      new DurableConsumer({
        ...common,
        name: GATEWAY_CONSUMER,
        stream: GatewayStream,
        messages: [JobSubmittedV1, JobSubmitted, JobCancelRequested],
        handle: async (envelope, { tx }) => {
          const now = clock.now();
          if (envelope.type === JobCancelRequested.type) {
            const cancel = envelope.data as PayloadOf<typeof JobCancelRequested>;
            await manager.handleIn(tx, cancel.jobId, {
              type: 'CancelJob',
              jobId: cancel.jobId,
              reason: cancel.reason,
              now,
            });
            return;
          }
          // v1 submissions arrive upcast to v2 (spec null): such a job fails when it is placed.
          const job = envelope.data as PayloadOf<typeof JobSubmitted>;
          await manager.handleIn(tx, job.jobId, {
            type: 'AcceptSubmission',
            submission: {
              jobId: job.jobId,
              tenantId: job.tenantId,
              gpuClasses: job.gpuClasses,
              spec: job.spec,
            },
            now,
          });
        },
      }),
      new DurableConsumer({
        ...common,
        name: PLACEMENTS_CONSUMER,
        stream: SchedulerStream,
        messages: [JobPlaced],
        handle: async (envelope, { tx }) => {
          // Placements may come before their submission (another stream): both are stored and the
          // job launches when it has the two.
          const placement = envelope.data as PayloadOf<typeof JobPlaced>;
          await manager.handleIn(tx, placement.jobId, {
            type: 'RecordPlacement',
            placement,
            now: clock.now(),
          });
        },
      }),
      new DurableConsumer({
        ...common,
        name: RANKS_CONSUMER,
        stream: EdgeRanksStream,
        messages: [RankStatusReported],
        handle: async (envelope, { tx, subject }) => {
          const status = envelope.data as PayloadOf<typeof RankStatusReported>;
          const edgeId = edgeIdOfSubject(subject, config.prefix);
          if (edgeId === undefined) {
            metrics.rankStatuses.inc({ verdict: 'bad-subject' });
            return;
          }
          const { before } = await manager.handleIn(
            tx,
            status.jobId,
            { type: 'RecordRankStatus', edgeId, status, now: clock.now() },
            { known: true },
          );
          metrics.rankStatuses.inc({ verdict: classifyStatus(before, edgeId, status) });
        },
      }),
      new DurableConsumer({
        ...common,
        name: PROVIDERS_CONSUMER,
        stream: DiscoveryStream,
        messages: [ProviderRegistered, ProviderInventoryChanged],
        handle: async (envelope, { tx }) => {
          await recordProvider(tx, envelope.data as PayloadOf<typeof ProviderInventoryChanged>);
        },
      }),
    ];
    const relay = new OutboxRelay({ db, js: nats.js, channel: store.channel, metrics: pipeline, onError });
    return new ExecutionRuntime(
      config,
      db,
      nats,
      store,
      manager,
      new EventingRuntime(db, nats, relay, consumers),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    // Resume the jobs that were running before taking new input.
    await this.manager.start();
    await this.eventing.onApplicationBootstrap();
  }

  async beforeApplicationShutdown(): Promise<void> {
    // No new effects first (the ones in flight finish), then consumers, relay, NATS and Postgres.
    await this.manager.stop();
    await this.eventing.beforeApplicationShutdown();
  }
}

@Module({})
export class ExecutionModule {
  static forRoot(options: ExecutionModuleOptions): DynamicModule {
    return {
      module: ExecutionModule,
      providers: [{ provide: EXECUTION_RUNTIME, useFactory: () => ExecutionRuntime.create(options) }],
      exports: [EXECUTION_RUNTIME],
    };
  }
}
