import { type Clock, type Envelope, type MessageRegistry, newEventId } from '@gpunet/contracts';
import type { Database, PostgresEventStore, Tx } from '@gpunet/eventing';
import type { ReconciliationEvent } from '../domain/reconciliation';
import { PostgresLedger } from '../infra/postgres-ledger';
import { PostgresUnitOfWork } from '../infra/postgres-unit-of-work';
import { SettlementReader } from '../infra/settlement-reader';
import type { ChainAdapter } from './chain-adapter.port';
import type { EventMeta, UnitOfWork } from './settlement.ports';
import { type SettlementConfig, SettlementWorkflow } from './settlement.workflow';

/** What one pass over the chain did. */
export interface ChainPass {
  readonly deposits: number;
  readonly withdrawalsCompleted: number;
  readonly withdrawalsFailed: number;
  readonly subnetsReleased: number;
  readonly mismatches: readonly ReconciliationEvent[];
}

/**
 * Settlement on its Postgres database: the workflow with Postgres units of work, for the consumers
 * (inside their transaction), the chain watcher and the queries.
 */
export class SettlementService {
  readonly ledger: PostgresLedger;
  readonly reader: SettlementReader;
  readonly workflow: SettlementWorkflow;

  constructor(
    readonly db: Database,
    readonly store: PostgresEventStore,
    readonly registry: MessageRegistry,
    readonly clock: Clock,
    config: SettlementConfig,
  ) {
    this.ledger = new PostgresLedger(db.schema);
    this.reader = new SettlementReader(db, store, this.ledger);
    this.workflow = new SettlementWorkflow(config, clock);
  }

  unitOfWork(tx: Tx): UnitOfWork {
    return new PostgresUnitOfWork(tx, this.store, this.ledger, this.registry, this.clock);
  }

  /** Applies a consumed message inside the consumer's transaction. */
  handle(envelope: Envelope, tx: Tx): Promise<void> {
    return this.workflow.handle(this.unitOfWork(tx), envelope);
  }

  run<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(this.unitOfWork(tx)));
  }

  /**
   * One pass over the chain: credit newly confirmed deposits, send held withdrawals and resolve the
   * ones the chain decided, release stake whose unbonding ended, reconcile every asset. Every step
   * is idempotent, so a pass interrupted by a crash (or run by two replicas) is simply redone.
   */
  async chainPass(adapter: ChainAdapter): Promise<ChainPass> {
    const meta = (): EventMeta => {
      const id = newEventId();
      return { correlationId: id, causationId: null };
    };
    let deposits = 0;
    for (const asset of adapter.assets) {
      const [row] = await this.db.query<{ cursor: string | null }>(
        `SELECT cursor FROM "${this.db.schema}".chain_cursors WHERE chain = $1 AND asset = $2`,
        [adapter.chain, asset],
      );
      const { deposits: found, cursor } = await adapter.confirmedDeposits(asset, row?.cursor ?? null);
      for (const d of found) {
        const { events } = await this.run((uow) =>
          this.workflow.recordDeposit(
            uow,
            {
              depositId: d.depositId,
              asset: d.asset,
              ownerId: d.ownerId,
              amount: d.amount.toString(),
              chain: adapter.chain,
              chainTxId: d.chainTxId,
              confirmations: d.confirmations,
              confirmedAt: this.clock.now().toISOString(),
            },
            meta(),
          ),
        );
        deposits += events.length;
      }
      await this.db.query(
        `INSERT INTO "${this.db.schema}".chain_cursors (chain, asset, cursor) VALUES ($1, $2, $3)
         ON CONFLICT (chain, asset) DO UPDATE SET cursor = excluded.cursor, updated_at = now()`,
        [adapter.chain, asset, cursor],
      );
    }

    let withdrawalsCompleted = 0;
    let withdrawalsFailed = 0;
    for (const w of await this.reader.openWithdrawals()) {
      await adapter.submitWithdrawal(w);
      const status = await adapter.withdrawalStatus(w.withdrawalId);
      if (status.state !== 'confirmed' && status.state !== 'failed') continue;
      const outcome =
        status.state === 'confirmed'
          ? { confirmed: true as const, chainTxId: status.chainTxId }
          : { confirmed: false as const, reason: status.reason };
      const { events } = await this.run((uow) =>
        this.workflow.resolveWithdrawal(uow, w.withdrawalId, outcome, meta()),
      );
      if (events.length > 0) {
        if (outcome.confirmed) withdrawalsCompleted += 1;
        else withdrawalsFailed += 1;
      }
    }

    let subnetsReleased = 0;
    for (const subnetId of await this.reader.subnetsWithDueUnbonding(this.clock.now())) {
      const { events } = await this.run((uow) => this.workflow.releaseUnbonded(uow, subnetId, meta()));
      if (events.length > 0) subnetsReleased += 1;
    }

    const mismatches: ReconciliationEvent[] = [];
    for (const asset of adapter.assets) {
      const custody = await adapter.custodyBalance(asset);
      mismatches.push(
        ...(await this.run((uow) => this.workflow.reconcile(uow, asset, custody, adapter.chain, meta()))),
      );
    }
    return { deposits, withdrawalsCompleted, withdrawalsFailed, subnetsReleased, mismatches };
  }
}
