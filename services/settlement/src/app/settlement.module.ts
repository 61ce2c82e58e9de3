import {
  AccountStatementQuery,
  catalog,
  catalogUpcasters,
  type Clock,
  createRegistry,
  DeadLettersStream,
  ExecutionStream,
  GatewayStream,
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobStatementQuery,
  JobSubmitted,
  JobSubmittedV1,
  type MessageDefinition,
  type MessageRegistry,
  type StreamDefinition,
  SettlementBalancesQuery,
  SettlementStream,
  SubnetCreateRequested,
  SimulatedChainDepositRequest,
  SubnetEconomicsQuery,
  SubnetJoinRequested,
  SubnetLeaveRequested,
  SubnetParametersUpdateRequested,
  systemClock,
  UsageReported,
  WithdrawalRequested,
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
import type { Subscription } from '@nats-io/nats-core';
import { type DynamicModule, Module } from '@nestjs/common';
import { settlementMigrations } from '../infra/migrations/0001-ledger.migration';
import type { ChainAdapter } from './chain-adapter.port';
import type { SettlementServiceConfig } from './settlement.config';
import { type ChainPass, SettlementService } from './settlement.service';

/** Injection token of the running settlement service. */
export const SETTLEMENT_RUNTIME = Symbol('gpunet.settlement.runtime');

export interface SettlementModuleOptions {
  readonly config: SettlementServiceConfig;
  /** The chain adapter (`SimulatedChainAdapter` in development and tests). */
  readonly chain: ChainAdapter;
  /**
   * The simulated chain's deposit hook: when given, settlement answers
   * `SimulatedChainDepositRequest` (development clusters, the demo, end-to-end tests). Never set
   * with a real chain.
   */
  readonly faucet?: SimulatedFaucet;
  /** Tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: Clock;
  /** The service's metrics registry (from `SERVICE_CONTEXT`). */
  readonly metrics?: Registry;
  readonly onError?: (error: unknown, context: string) => void;
  /** Consumer batch size (tests lower it). Default 128. */
  readonly batchSize?: number;
}

/** What the simulated chain offers for development deposits (`SimulatedChainAdapter`). */
export interface SimulatedFaucet {
  deposit(ownerId: string, asset: string, amount: bigint): string;
  mine(blocks: number): void;
  readonly confirmationsRequired: number;
}

/** Every message settlement reads or writes (the whole catalog: it declares other services' streams too). */
export const settlementRegistry = (): MessageRegistry => createRegistry(catalog, catalogUpcasters);

/** Durable consumer names. */
export const GATEWAY_CONSUMER = 'settlement-gateway';
export const EXECUTION_CONSUMER = 'settlement-execution';

/**
 * Settlement, assembled: its database (event store, outbox, inbox, ledger), NATS, two durable
 * consumers (the gateway's requests; execution's usage and job ends), the outbox relay, the queries
 * and the chain watcher. Nest calls the lifecycle hooks.
 */
export class SettlementRuntime {
  private readonly subscriptions: Subscription[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private passing: Promise<ChainPass> | undefined;

  private constructor(
    readonly config: SettlementServiceConfig,
    readonly service: SettlementService,
    readonly nats: NatsHandle,
    readonly eventing: EventingRuntime,
    readonly chain: ChainAdapter,
    private readonly onError: (error: unknown, context: string) => void,
    private readonly faucet: SimulatedFaucet | undefined,
  ) {}

  static async create(options: SettlementModuleOptions): Promise<SettlementRuntime> {
    const { config } = options;
    const clock = options.clock ?? systemClock;
    const onError = options.onError ?? (() => undefined);
    const registry = settlementRegistry();
    const pipeline = options.metrics ? eventingMetrics(options.metrics) : undefined;
    const db = await new Database({
      url: config.databaseUrl,
      schema: config.schema,
      migrations: settlementMigrations,
      applicationName: 'settlement',
    }).open();
    let nats: NatsHandle;
    try {
      nats = await connectNats({ servers: config.natsUrl, name: 'settlement' });
      await ensureStreams(
        nats.jsm,
        [DeadLettersStream, GatewayStream, ExecutionStream, SettlementStream],
        config.prefix,
      );
    } catch (error) {
      await db.close();
      throw error;
    }
    const store = new PostgresEventStore(db, registry, config.prefix);
    const service = new SettlementService(db, store, registry, clock, config.economy);
    const consumer = (name: string, stream: StreamDefinition, messages: readonly MessageDefinition[]) =>
      new DurableConsumer({
        name,
        stream,
        messages,
        handle: (envelope, { tx }) => service.handle(envelope, tx),
        registry,
        db,
        ...nats,
        prefix: config.prefix,
        // Usage may arrive before its job's submission (another stream): retried with backoff.
        maxAttempts: 20,
        onError,
        ...(pipeline ? { metrics: pipeline } : {}),
        ...(options.batchSize ? { batchSize: options.batchSize } : {}),
      });
    const consumers = [
      consumer(GATEWAY_CONSUMER, GatewayStream, [
        JobSubmittedV1,
        JobSubmitted,
        SubnetCreateRequested,
        SubnetParametersUpdateRequested,
        SubnetJoinRequested,
        SubnetLeaveRequested,
        WithdrawalRequested,
      ]),
      consumer(EXECUTION_CONSUMER, ExecutionStream, [UsageReported, JobCompleted, JobFailed, JobCancelled]),
    ];
    const relay = new OutboxRelay({
      db,
      js: nats.js,
      channel: store.channel,
      onError,
      ...(pipeline ? { metrics: pipeline } : {}),
    });
    return new SettlementRuntime(
      config,
      service,
      nats,
      new EventingRuntime(db, nats, relay, consumers),
      options.chain,
      onError,
      options.faucet,
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.eventing.onApplicationBootstrap();
    const { reader } = this.service;
    const options = {
      nc: this.nats.nc,
      prefix: this.config.prefix,
      queue: 'settlement',
      onError: this.onError,
    };
    this.subscriptions.push(
      serveQuery(SettlementBalancesQuery, (r) => reader.balances(r), options),
      serveQuery(AccountStatementQuery, (r) => reader.accountStatement(r), options),
      serveQuery(JobStatementQuery, (r) => reader.jobStatement(r.jobId), options),
      serveQuery(SubnetEconomicsQuery, (r) => reader.subnetEconomics(r.subnetId), options),
    );
    const faucet = this.faucet;
    if (faucet) {
      this.subscriptions.push(
        serveQuery(
          SimulatedChainDepositRequest,
          async (r) => {
            if (!this.chain.assets.includes(r.asset))
              throw new Error(
                `asset ${r.asset} is not held by the simulated chain (${this.chain.assets.join(', ')})`,
              );
            const chainTxId = faucet.deposit(r.ownerId, r.asset, BigInt(r.amount));
            faucet.mine(faucet.confirmationsRequired);
            // A pass already running may have read the chain before this deposit: wait for it,
            // then run one that sees it.
            await this.passing?.catch(() => undefined);
            await this.chainPass();
            const { accounts } = await reader.balances({ ownerId: r.ownerId, asset: r.asset });
            const wallet = accounts.find((a) => a.accountId === `${r.asset}:wallet:${r.ownerId}`);
            return { chainTxId, available: wallet?.available ?? '0' };
          },
          options,
        ),
      );
    }
    if (this.config.chainPassMs > 0) {
      this.timer = setInterval(() => {
        this.chainPass().catch((error: unknown) => this.onError(error, 'settlement chain pass failed'));
      }, this.config.chainPassMs);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.passing?.catch(() => undefined);
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
    await this.eventing.beforeApplicationShutdown();
  }

  /** One pass over the chain now (also every `chainPassMs`); passes never overlap. */
  chainPass(): Promise<ChainPass> {
    this.passing ??= this.service.chainPass(this.chain).finally(() => {
      this.passing = undefined;
    });
    return this.passing;
  }
}

@Module({})
export class SettlementModule {
  static forRoot(options: SettlementModuleOptions): DynamicModule {
    return {
      module: SettlementModule,
      providers: [{ provide: SETTLEMENT_RUNTIME, useFactory: () => SettlementRuntime.create(options) }],
      exports: [SETTLEMENT_RUNTIME],
    };
  }
}
