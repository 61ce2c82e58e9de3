import {
  buildEnvelope,
  catalog,
  catalogUpcasters,
  createRegistry,
  type Envelope,
  type InputOf,
  type MessageDefinition,
  type MessageRegistry,
  newEventId,
} from '@gpunet/contracts';
import { Database, PostgresEventStore } from '@gpunet/eventing';
import { FakeClock, type PostgresTestSchema, usePostgres } from '@gpunet/testing';
import { DEFAULT_SETTLEMENT_CONFIG, SettlementWorkflow } from '../../src/app/settlement.workflow';
import type { UnitOfWork } from '../../src/app/settlement.ports';
import { Ledger } from '../../src/domain/ledger/ledger';
import { ledgerHash } from '../../src/domain/ledger/ledger-hash';
import { settlementMigrations } from '../../src/infra/migrations/0001-ledger.migration';
import { PostgresLedger } from '../../src/infra/postgres-ledger';
import { PostgresUnitOfWork } from '../../src/infra/postgres-unit-of-work';
import type { Transfer } from '../../src/domain/ledger/transfer';
import { jobSettlementDecider } from '../../src/domain/job/job-settlement.decider';
import { jobTransfers } from '../../src/domain/job/job-settlement.effects';
import { subnetDecider } from '../../src/domain/subnet/subnet.decider';
import { subnetTransfers } from '../../src/domain/subnet/subnet.effects';
import { depositDecider, depositTransfers } from '../../src/domain/wallet/deposit.decider';
import { withdrawalDecider, withdrawalTransfers } from '../../src/domain/wallet/withdrawal.decider';

/** Settlement's workflow on a real Postgres schema of its own (event store + ledger). */
export interface PostgresSettlement {
  readonly pg: PostgresTestSchema;
  readonly db: Database;
  readonly store: PostgresEventStore;
  readonly ledger: PostgresLedger;
  readonly registry: MessageRegistry;
  readonly clock: FakeClock;
  readonly workflow: SettlementWorkflow;
  /** Runs `work` in one transaction with a Postgres unit of work. */
  run<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T>;
  /** Delivers one message, as the consumer would (one transaction). */
  deliver(envelope: Envelope): Promise<void>;
  /** The ledger rebuilt from the event store (every event's transfers, in global order). */
  replayHash(): Promise<string>;
  close(): Promise<void>;
}

export const openSettlement = async (label: string, poolSize = 10): Promise<PostgresSettlement> => {
  const pg = await usePostgres({ label });
  const db = await new Database({
    url: pg.connectionString,
    schema: pg.schema,
    migrations: settlementMigrations,
    poolSize,
  }).open();
  const registry = createRegistry(catalog, catalogUpcasters);
  const store = new PostgresEventStore(db, registry);
  const ledger = new PostgresLedger(pg.schema);
  const clock = new FakeClock('2030-01-01T00:00:00Z');
  const workflow = new SettlementWorkflow(
    { ...DEFAULT_SETTLEMENT_CONFIG, minSubnetCreationStake: 1_000n },
    clock,
  );
  const run = <T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> =>
    db.transaction((tx) => work(new PostgresUnitOfWork(tx, store, ledger, registry, clock)));
  return {
    pg,
    db,
    store,
    ledger,
    registry,
    clock,
    workflow,
    run,
    deliver: (envelope) => run((uow) => workflow.handle(uow, envelope)),
    replayHash: async () => {
      const reference = Ledger.empty();
      const states = new Map<string, unknown>();
      for (let after = 0; ;) {
        const page = await store.readAll({ afterPosition: after, limit: 1000 });
        if (page.length === 0) break;
        for (const e of page) {
          const kind = e.streamId.split('-')[0]!;
          const replayer = REPLAYERS[kind];
          if (!replayer) continue;
          const before = states.get(e.streamId) ?? replayer.decider.initialState;
          const event = { type: e.type, data: e.data } as never;
          reference.apply(replayer.effects(before, event));
          states.set(e.streamId, replayer.decider.evolve(before, event));
        }
        after = page.at(-1)!.globalPosition;
      }
      return ledgerHash(reference.accounts(), reference.transfers());
    },
    close: async () => {
      await db.close();
      await pg.drop();
    },
  };
};

interface Replayer {
  decider: { initialState: unknown; evolve: (s: unknown, e: never) => unknown };
  effects: (s: unknown, e: never) => Transfer[];
}
const REPLAYERS: Record<string, Replayer> = {
  job: { decider: jobSettlementDecider as never, effects: jobTransfers as never },
  subnet: { decider: subnetDecider as never, effects: subnetTransfers as never },
  deposit: { decider: depositDecider as never, effects: depositTransfers as never },
  withdrawal: { decider: withdrawalDecider as never, effects: withdrawalTransfers as never },
};

export const message = <D extends MessageDefinition>(def: D, data: InputOf<D>, streamId = 'test'): Envelope =>
  buildEnvelope(def, data, { streamId, eventId: newEventId() });
