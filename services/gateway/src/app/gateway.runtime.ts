import {
  catalog,
  catalogUpcasters,
  createRegistry,
  DeadLettersStream,
  EscrowRejected,
  ExecutionStream,
  GatewayStream,
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobFunded,
  JobLaunching,
  JobLogsStream,
  JobPlaced,
  JobQueued,
  JobRestarting,
  JobRunning,
  JobSettled,
  JobUnschedulable,
  type MessageDefinition,
  type MessageRegistry,
  OverlayPathsReported,
  RankExited,
  schedulerMessages,
  SchedulerStream,
  SettlementStream,
  type StreamDefinition,
  UsageMetered,
  UsageReported,
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
import type { Registry } from '@gpunet/telemetry';
import { nkeyAuthenticator } from '@nats-io/nats-core';
import { gatewayMigrations } from '../infra/gateway.migrations';
import { JobsProjection } from '../infra/jobs.projection';
import { ApiKeyStore } from './api-keys';
import type { GatewayConfig } from './gateway.config';
import { IdempotencyStore } from './idempotency.store';

/** Every message the gateway reads or writes. */
export const gatewayRegistry = (): MessageRegistry =>
  createRegistry([...catalog, ...schedulerMessages, OverlayPathsReported], catalogUpcasters);

/** Durable consumer names (one per stream the jobs projection reads). */
export const SETTLEMENT_CONSUMER = 'gateway-jobs-settlement';
export const SCHEDULER_CONSUMER = 'gateway-jobs-scheduler';
export const EXECUTION_CONSUMER = 'gateway-jobs-execution';

/** Streams the gateway declares (idempotent) so that it can start before the services it reads. */
export const GATEWAY_STREAMS: readonly StreamDefinition[] = [
  DeadLettersStream,
  GatewayStream,
  SettlementStream,
  SchedulerStream,
  ExecutionStream,
  JobLogsStream,
];

export interface GatewayRuntimeOptions {
  readonly config: GatewayConfig;
  readonly metrics?: Registry;
  readonly onError?: (error: unknown, context: string) => void;
}

/**
 * The gateway's back end: its database (event store, outbox, inbox, API keys, idempotency, jobs read
 * model), NATS, the outbox relay that publishes what people asked for on the GATEWAY stream, and
 * three durable consumers that keep the jobs read model up to date from settlement, the scheduler
 * and execution. The gateway's own events (job.submitted, job.cancel-requested) enter the read model
 * in the transaction that appends them: a client reads its job right after submitting it.
 */
export class GatewayRuntime {
  private constructor(
    readonly config: GatewayConfig,
    readonly registry: MessageRegistry,
    readonly db: Database,
    readonly nats: NatsHandle,
    readonly store: PostgresEventStore,
    readonly projection: JobsProjection,
    readonly keys: ApiKeyStore,
    readonly idempotency: IdempotencyStore,
    readonly eventing: EventingRuntime,
  ) {}

  static async create(options: GatewayRuntimeOptions): Promise<GatewayRuntime> {
    const { config } = options;
    const onError = options.onError ?? (() => undefined);
    const registry = gatewayRegistry();
    const pipeline = options.metrics ? eventingMetrics(options.metrics) : undefined;
    const db = await new Database({
      url: config.databaseUrl,
      schema: config.schema,
      migrations: gatewayMigrations,
      applicationName: 'gateway',
    }).open();
    let nats: NatsHandle;
    try {
      nats = await connectNats({
        servers: config.natsUrl,
        name: 'gateway',
        ...(config.natsSeed !== null
          ? { authenticator: nkeyAuthenticator(new TextEncoder().encode(config.natsSeed)) }
          : {}),
      });
      await ensureStreams(nats.jsm, GATEWAY_STREAMS, config.prefix);
    } catch (error) {
      await db.close();
      throw error;
    }
    const store = new PostgresEventStore(db, registry, config.prefix);
    const projection = new JobsProjection(db);
    const keys = new ApiKeyStore(db, { cacheTtlMs: config.keyCacheTtlMs });
    if (config.adminKey !== undefined) await keys.ensureBootstrapKey(config.adminKey, config.adminTenant);
    const consumer = (name: string, stream: StreamDefinition, messages: readonly MessageDefinition[]) =>
      new DurableConsumer({
        name,
        stream,
        messages,
        // A consumer batch in four statements (`applyBatch`), not five per event.
        handleBatch: (envelopes, { tx }) => projection.applyBatch(tx, envelopes),
        registry,
        db,
        ...nats,
        prefix: config.prefix,
        onError,
        ...(pipeline ? { metrics: pipeline } : {}),
      });
    const consumers = [
      consumer(SETTLEMENT_CONSUMER, SettlementStream, [JobFunded, EscrowRejected, UsageMetered, JobSettled]),
      consumer(SCHEDULER_CONSUMER, SchedulerStream, [JobQueued, JobPlaced, JobUnschedulable]),
      consumer(EXECUTION_CONSUMER, ExecutionStream, [
        JobLaunching,
        JobRunning,
        JobRestarting,
        RankExited,
        UsageReported,
        JobCompleted,
        JobFailed,
        JobCancelled,
        OverlayPathsReported,
      ]),
    ];
    const relay = new OutboxRelay({
      db,
      js: nats.js,
      channel: store.channel,
      onError,
      ...(pipeline ? { metrics: pipeline } : {}),
    });
    return new GatewayRuntime(
      config,
      registry,
      db,
      nats,
      store,
      projection,
      keys,
      new IdempotencyStore(db),
      new EventingRuntime(db, nats, relay, consumers),
    );
  }

  async start(): Promise<void> {
    await this.eventing.onApplicationBootstrap();
  }

  async stop(): Promise<void> {
    await this.eventing.beforeApplicationShutdown();
  }

  /** Whether Postgres answers and NATS is connected (for `/readyz`). */
  async ready(): Promise<{ database: boolean; nats: boolean }> {
    const database = await this.db
      .query('SELECT 1')
      .then(() => true)
      .catch(() => false);
    const nats =
      !this.nats.nc.isClosed() &&
      (await Promise.race([
        this.nats.nc.flush().then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000).unref()),
      ]));
    return { database, nats };
  }
}
