import { Writable } from 'node:stream';
import type { Clock, DomainEvent, Envelope } from '@gpunet/contracts';
import { EVENTING, EventContext, type EventingRuntime, type Tx } from '@gpunet/eventing';
import { type RunningService, runService } from '@gpunet/service-runtime';
import { createLogger } from '@gpunet/telemetry';
import {
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  serviceConnection,
} from '@gpunet/testing';
import type { ChainAdapter } from '../../src/app/chain-adapter.port';
import { BenchmarkingHandler } from '../../src/app/benchmarking.handler';
import { ChainWatcher } from '../../src/app/chain-watcher.service';
import { ExecutionHandler } from '../../src/app/execution.handler';
import { GatewayHandler } from '../../src/app/gateway.handler';
import { DEFAULT_ECONOMY, type EconomyConfig } from '../../src/app/settlement.config';
import { SettlementCommands } from '../../src/app/settlement.commands';
import { SettlementModule } from '../../src/app/settlement.module';
import { SimulatedChainAdapter } from '../../src/infra/chain/simulated-chain.adapter';
import { PostgresLedger, type Sql } from '../../src/infra/postgres-ledger';

/** Settlement booted the production way (`runService`), on the shared NATS and Postgres, in its own namespace. */
export interface SettlementUnderTest {
  readonly service: RunningService;
  readonly eventing: EventingRuntime;
  readonly commands: SettlementCommands;
  readonly watcher: ChainWatcher;
  readonly ledger: PostgresLedger;
  readonly nats: NatsTestContext;
  readonly pg: PostgresTestSchema;
  /** What the service reported through `onError`. */
  readonly errors: { error: unknown; context: string }[];
  /**
   * Hands `envelope` to its controller method, in `tx`, as the transport would (first delivery):
   * for tests that decide when and in which order messages arrive.
   */
  handle(envelope: Envelope, tx: Tx): Promise<void>;
  /** Whether a controller consumes messages of `type` (`handle` refuses the others). */
  consumes(type: string): boolean;
  /** `handle` in a transaction of its own, as a consumer batch of one. */
  deliver(envelope: Envelope): Promise<void>;
  /** Settlement's events in the order they were appended, as `sql` (a transaction, or the pool) sees them. */
  log(sql?: Sql): Promise<{ streamId: string; event: DomainEvent }[]>;
  close(): Promise<void>;
}

export interface SettlementTestOptions {
  readonly chain?: ChainAdapter;
  /** Serve `SimulatedChainDepositRequest` (the chain must then be a `SimulatedChainAdapter`). */
  readonly faucet?: boolean;
  readonly clock?: Clock;
  /** The durable consumers' batch size. Default: theirs. */
  readonly batchSize?: number;
  readonly economy?: Partial<EconomyConfig>;
}

const silent = createLogger({
  service: 'settlement',
  destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
});

/** A controller method, as the transport calls it. */
type Route = (data: never, ctx: EventContext) => Promise<void>;

export const startSettlement = async (
  label: string,
  options: SettlementTestOptions = {},
): Promise<SettlementUnderTest> => {
  const pg = await usePostgres({ label });
  const nats = await useNats({ label });
  const errors: { error: unknown; context: string }[] = [];
  const chain = options.chain ?? new SimulatedChainAdapter({ assets: ['NTX'] });
  let service: RunningService;
  try {
    service = await runService({
      name: 'settlement',
      handleSignals: false,
      env: {},
      logger: silent,
      ...(options.batchSize ? { transport: { defaults: { batchSize: options.batchSize } } } : {}),
      module: ({ metrics }) =>
        SettlementModule.forRoot({
          config: {
            ...serviceConnection(pg, nats),
            economy: { ...DEFAULT_ECONOMY, minSubnetCreationStake: 1_000n, ...options.economy },
            chain: 'simulated',
            assets: chain.assets,
            chainPassMs: 0,
          },
          chain,
          ...(options.faucet ? { faucet: chain as SimulatedChainAdapter } : {}),
          clock: options.clock,
          metrics,
          onError: (error, context) => errors.push({ error, context }),
        }),
    });
  } catch (error) {
    await nats.cleanup();
    await pg.drop();
    throw error;
  }
  const { app } = service;
  const eventing = app.get<EventingRuntime>(EVENTING);
  const gateway = app.get(GatewayHandler);
  const execution = app.get(ExecutionHandler);
  const benchmarking = app.get(BenchmarkingHandler);
  const routes: Record<string, Route> = {
    'job.submitted': (d, c) => gateway.jobSubmitted(d, c),
    'subnet.create-requested': (d, c) => gateway.subnetCreateRequested(d, c),
    'subnet.parameters-update-requested': (d, c) => gateway.subnetParametersUpdateRequested(d, c),
    'subnet.join-requested': (d, c) => gateway.subnetJoinRequested(d, c),
    'subnet.leave-requested': (d, c) => gateway.subnetLeaveRequested(d, c),
    'subnet.proposal-requested': (d, c) => gateway.subnetProposalRequested(d, c),
    'subnet.vote-requested': (d, c) => gateway.subnetVoteRequested(d, c),
    'subnet.delegation-requested': (d, c) => gateway.subnetDelegationRequested(d, c),
    'subnet.undelegation-requested': (d, c) => gateway.subnetUndelegationRequested(d, c),
    'withdrawal.requested': (d, c) => gateway.withdrawalRequested(d, c),
    'usage.reported': (d, c) => execution.usageReported(d, c),
    'usage.disputed': (d, c) => execution.usageDisputed(d, c),
    'job.completed': (d, c) => execution.jobCompleted(d, c),
    'job.failed': (d, c) => execution.jobFailed(d, c),
    'job.cancelled': (d, c) => execution.jobCancelled(d, c),
    'provider.challenged': (d, c) => benchmarking.providerChallenged(d, c),
  };
  const handle = (envelope: Envelope, tx: Tx): Promise<void> => {
    const route = routes[envelope.type];
    if (!route) throw new Error(`settlement consumes no ${envelope.type}`);
    const parsed = eventing.registry.parse(envelope);
    const context = new EventContext([
      parsed,
      { tx, subject: envelope.type, streamSequence: 0, deliveryCount: 1 },
    ]);
    return route(parsed.data as never, context);
  };
  return {
    service,
    eventing,
    commands: app.get(SettlementCommands),
    watcher: app.get(ChainWatcher),
    ledger: app.get(PostgresLedger),
    nats,
    pg,
    errors,
    handle,
    consumes: (type) => type in routes,
    deliver: (envelope) => eventing.db.transaction((tx) => handle(envelope, tx)),
    log: async (sql = eventing.db) =>
      (
        await sql.query<{ stream_id: string; type: string; data: unknown }>(
          `SELECT stream_id, type, data FROM "${pg.schema}".events ORDER BY global_position`,
        )
      ).map((r) => ({ streamId: r.stream_id, event: { type: r.type, data: r.data } })),
    close: async () => {
      await service.close();
      await nats.cleanup();
      await pg.drop();
    },
  };
};
