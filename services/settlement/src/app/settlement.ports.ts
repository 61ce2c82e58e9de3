import type { DomainEvent } from '@gpunet/contracts';
import type { AssetTotals } from '../domain/reconciliation';
import type { AccountBalances, Transfer, TransferResult } from '../domain/ledger/transfer';

/** Causation of the events a unit of work appends. */
export interface EventMeta {
  readonly correlationId: string;
  readonly causationId: string | null;
}

/**
 * What the settlement workflow needs from storage, inside one transaction. Two adapters: Postgres
 * (`infra/postgres-unit-of-work.ts`: the event store, advisory locks and the database-enforced
 * ledger) and memory (tests: the pure `Ledger`). The ledger contract suite runs against both.
 */
export interface UnitOfWork {
  /** Serializes writers of these streams until the unit of work ends (no lost update per job). */
  lockStreams(streamIds: readonly string[]): Promise<void>;
  readStream(streamId: string): Promise<{ version: number; events: DomainEvent[] }>;
  /** Appends at `expectedVersion` (0: the stream must not exist), failing on a conflict. */
  appendToStream(
    streamId: string,
    expectedVersion: number,
    events: readonly DomainEvent[],
    meta: EventMeta,
  ): Promise<void>;
  /** Locks the accounts, in id order (so writers never deadlock on them), and returns their balances. */
  lockAccounts(accountIds: readonly string[]): Promise<Map<string, AccountBalances>>;
  /** Applies a batch atomically; throws `LedgerError` when it breaks a rule (nothing applied). */
  applyTransfers(transfers: readonly Transfer[]): Promise<TransferResult[]>;
  /** One asset's ledger, summed, for reconciliation. */
  assetTotals(asset: string): Promise<AssetTotals>;
}
