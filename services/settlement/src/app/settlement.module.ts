import {
  BenchmarkingStream,
  catalog,
  catalogUpcasters,
  type Clock,
  createRegistry,
  DeadLettersStream,
  ExecutionStream,
  GatewayStream,
  type MessageRegistry,
  ProviderChallenged,
  SettlementStream,
} from '@gpunet/contracts';
import { EVENTING, EventingModule, type EventingRuntime } from '@gpunet/eventing';
import type { Registry } from '@gpunet/telemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { ChainCursorRepository } from '../infra/chain-cursor.repository';
import { settlementMigrations } from '../infra/migrations/0002-burn-and-delegation-accounts.migration';
import { PostgresLedger } from '../infra/postgres-ledger';
import { SettlementReader } from '../infra/settlement-reader';
import type { ChainAdapter, SimulatedFaucet } from './chain-adapter.port';
import { BenchmarkingHandler } from './benchmarking.handler';
import { ChainWatcher } from './chain-watcher.service';
import { ExecutionHandler } from './execution.handler';
import { GatewayHandler } from './gateway.handler';
import type { SettlementConfig } from './settlement.config';
import { SettlementCommands } from './settlement.commands';
import { SettlementQueriesHandler } from './settlement-queries.handler';
import { CHAIN_ADAPTER, SETTLEMENT_CONFIG, SIMULATED_FAUCET } from './settlement.tokens';
import { SimulatedChainHandler } from './simulated-chain.handler';

export interface SettlementModuleOptions {
  readonly config: SettlementConfig;
  /** The chain adapter (`SimulatedChainAdapter` in development and tests). */
  readonly chain: ChainAdapter;
  /**
   * The simulated chain's deposit hook: when given, settlement answers
   * `SimulatedChainDepositRequest` (development clusters, the demo, end-to-end tests). Never set
   * with a real chain.
   */
  readonly faucet?: SimulatedFaucet;
  /** The time of every decision and envelope; tests pass a fake one. Default: the system clock. */
  readonly clock?: Clock;
  /** The service's metrics registry (`ServiceContext.metrics`). */
  readonly metrics?: Registry;
  /** Told every failure the service recovers from (a retried message, a failed chain pass). */
  readonly onError?: (error: unknown, context: string) => void;
}

/** Every message settlement reads or writes (the catalog, and the benchmarking evidence it slashes on). */
export const settlementRegistry = (): MessageRegistry =>
  createRegistry([...catalog, ProviderChallenged], catalogUpcasters);

/** The streams settlement reads (the gateway's, execution's, benchmarking's) and writes (its own, dead letters). */
export const SETTLEMENT_STREAMS = [
  DeadLettersStream,
  GatewayStream,
  ExecutionStream,
  BenchmarkingStream,
  SettlementStream,
];

/**
 * Settlement, assembled: its eventing (database with the ledger tables, NATS, streams, outbox
 * relay), the controllers of its three durable consumers and its queries, its decisions and the chain
 * watcher. Boot it with `runService`, which serves the controllers on the JetStream transport.
 */
@Module({})
export class SettlementModule {
  static forRoot(options: SettlementModuleOptions): DynamicModule {
    const { config, faucet } = options;
    return {
      module: SettlementModule,
      imports: [
        EventingModule.forService('settlement', config, {
          registry: settlementRegistry(),
          streams: SETTLEMENT_STREAMS,
          migrations: settlementMigrations,
          clock: options.clock,
          metrics: options.metrics,
          onError: options.onError,
        }),
      ],
      controllers: [
        GatewayHandler,
        ExecutionHandler,
        BenchmarkingHandler,
        SettlementQueriesHandler,
        ...(faucet ? [SimulatedChainHandler] : []),
      ],
      providers: [
        { provide: SETTLEMENT_CONFIG, useValue: config },
        { provide: CHAIN_ADAPTER, useValue: options.chain },
        ...(faucet ? [{ provide: SIMULATED_FAUCET, useValue: faucet }] : []),
        {
          provide: PostgresLedger,
          useFactory: (eventing: EventingRuntime) => new PostgresLedger(eventing.db.schema),
          inject: [EVENTING],
        },
        {
          provide: SettlementReader,
          useFactory: (eventing: EventingRuntime, ledger: PostgresLedger) =>
            new SettlementReader(eventing.db, eventing.store, ledger),
          inject: [EVENTING, PostgresLedger],
        },
        {
          provide: ChainCursorRepository,
          useFactory: (eventing: EventingRuntime) => new ChainCursorRepository(eventing.db),
          inject: [EVENTING],
        },
        SettlementCommands,
        ChainWatcher,
      ],
    };
  }
}
