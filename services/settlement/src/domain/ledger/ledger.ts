import { type AccountSpec, accountSpec } from '../accounts';
import { DomainError } from '@gpunet/contracts';
import { LedgerError } from './ledger.errors';
import {
  type AccountBalances,
  sameTransfer,
  type Transfer,
  type TransferResult,
  ZERO_BALANCES,
} from './transfer';

export interface Account extends AccountSpec, AccountBalances {}

/** A transfer as recorded: with its position in the ledger's order. */
export interface RecordedTransfer extends Transfer {
  readonly sequence: number;
  readonly asset: string;
}

/**
 * The ledger, pure: the rules the Postgres ledger enforces in the database, in memory. The property
 * tests rebuild it from settlement's event log and compare it with Postgres's; the contract suite
 * checks that both ledgers accept and refuse the same batches. A batch is atomic (TigerBeetle's `linked` chain): every transfer applies, in order,
 * or none does; balance rules judge each account where the whole batch leaves it.
 */
export class Ledger {
  private constructor(
    private readonly accountsById: Map<string, Account>,
    private readonly transfersById: Map<string, RecordedTransfer>,
    private readonly resolvedBy: Map<string, string>,
    private sequence: number,
  ) {}

  static empty(): Ledger {
    return new Ledger(new Map(), new Map(), new Map(), 0);
  }

  account(id: string): Account | undefined {
    return this.accountsById.get(id);
  }

  balances(id: string): AccountBalances {
    return this.accountsById.get(id) ?? ZERO_BALANCES;
  }

  transfer(id: string): RecordedTransfer | undefined {
    return this.transfersById.get(id);
  }

  /** The transfer that resolved a pending one, if any. */
  resolutionOf(pendingId: string): RecordedTransfer | undefined {
    const id = this.resolvedBy.get(pendingId);
    return id === undefined ? undefined : this.transfersById.get(id);
  }

  accounts(): Account[] {
    return [...this.accountsById.values()];
  }

  /** Transfers in the order they were recorded. */
  transfers(): RecordedTransfer[] {
    return [...this.transfersById.values()].sort((a, b) => a.sequence - b.sequence);
  }

  /**
   * Applies a batch atomically; throws `LedgerError` (and changes nothing) if any transfer breaks a
   * rule. A transfer whose id exists with the same fields is `exists` (idempotent), with other
   * fields `EXISTS_WITH_DIFFERENT_FIELDS`.
   */
  apply(batch: readonly Transfer[]): TransferResult[] {
    const accounts = new Map<string, Account>();
    const created = new Map<string, RecordedTransfer>();
    const resolved = new Map<string, string>();
    let sequence = this.sequence;
    const accountOf = (id: string, transferId: string): Account => {
      const staged = accounts.get(id) ?? this.accountsById.get(id);
      if (staged) return staged;
      let spec: AccountSpec;
      try {
        spec = accountSpec(id);
      } catch (error) {
        if (error instanceof DomainError)
          throw new LedgerError('INVALID_ACCOUNT_ID', error.message, transferId);
        throw error;
      }
      return { ...spec, ...ZERO_BALANCES };
    };
    const transferOf = (id: string) => created.get(id) ?? this.transfersById.get(id);

    const results = batch.map((t): TransferResult => {
      const existing = transferOf(t.id);
      if (existing) {
        if (sameTransfer(existing, t)) return 'exists';
        throw new LedgerError(
          'EXISTS_WITH_DIFFERENT_FIELDS',
          `transfer ${t.id} exists with other fields`,
          t.id,
        );
      }
      if (t.debitAccountId === t.creditAccountId)
        throw new LedgerError(
          'ACCOUNTS_MUST_BE_DIFFERENT',
          `transfer ${t.id} debits and credits one account`,
          t.id,
        );
      if (t.amount <= 0n)
        throw new LedgerError('INVALID_AMOUNT', `transfer ${t.id}: amount must be positive`, t.id);
      const debit = accountOf(t.debitAccountId, t.id);
      const credit = accountOf(t.creditAccountId, t.id);
      if (debit.asset !== credit.asset)
        throw new LedgerError(
          'ASSET_MISMATCH',
          `transfer ${t.id} crosses ledgers ${debit.asset}/${credit.asset}`,
          t.id,
        );

      let nextDebit: Account;
      let nextCredit: Account;
      if (t.kind === 'posted' || t.kind === 'pending') {
        if (t.pendingId !== null)
          throw new LedgerError(
            'PENDING_ID_NOT_ALLOWED',
            `transfer ${t.id}: only posts and voids name a pending transfer`,
            t.id,
          );
        if (t.kind === 'posted') {
          nextDebit = { ...debit, debitsPosted: debit.debitsPosted + t.amount };
          nextCredit = { ...credit, creditsPosted: credit.creditsPosted + t.amount };
        } else {
          nextDebit = { ...debit, debitsPending: debit.debitsPending + t.amount };
          nextCredit = { ...credit, creditsPending: credit.creditsPending + t.amount };
        }
      } else {
        if (t.pendingId === null)
          throw new LedgerError(
            'PENDING_ID_MISSING',
            `transfer ${t.id}: a ${t.kind} names its pending transfer`,
            t.id,
          );
        const pending = transferOf(t.pendingId);
        if (!pending)
          throw new LedgerError(
            'PENDING_TRANSFER_NOT_FOUND',
            `transfer ${t.id}: no pending transfer ${t.pendingId}`,
            t.id,
          );
        if (pending.kind !== 'pending')
          throw new LedgerError(
            'PENDING_TRANSFER_NOT_PENDING',
            `transfer ${t.id}: ${t.pendingId} is not pending`,
            t.id,
          );
        if (resolved.has(t.pendingId) || this.resolvedBy.has(t.pendingId))
          throw new LedgerError(
            'PENDING_TRANSFER_ALREADY_RESOLVED',
            `transfer ${t.id}: ${t.pendingId} was already posted or voided`,
            t.id,
          );
        if (pending.debitAccountId !== t.debitAccountId || pending.creditAccountId !== t.creditAccountId)
          throw new LedgerError(
            'PENDING_TRANSFER_HAS_DIFFERENT_ACCOUNTS',
            `transfer ${t.id}: accounts differ from ${t.pendingId}'s`,
            t.id,
          );
        if (t.kind === 'post-pending' ? t.amount > pending.amount : t.amount !== pending.amount)
          throw new LedgerError(
            'EXCEEDS_PENDING_AMOUNT',
            `transfer ${t.id}: ${t.kind} of ${t.amount} against pending ${pending.amount}`,
            t.id,
          );
        const posted = t.kind === 'post-pending' ? t.amount : 0n;
        nextDebit = {
          ...debit,
          debitsPending: debit.debitsPending - pending.amount,
          debitsPosted: debit.debitsPosted + posted,
        };
        nextCredit = {
          ...credit,
          creditsPending: credit.creditsPending - pending.amount,
          creditsPosted: credit.creditsPosted + posted,
        };
        resolved.set(t.pendingId, t.id);
      }
      accounts.set(nextDebit.id, nextDebit);
      accounts.set(nextCredit.id, nextCredit);
      sequence += 1;
      created.set(t.id, { ...t, asset: debit.asset, sequence });
      return 'created';
    });

    // A batch is one decision: nobody observes its intermediate states, so each account is judged
    // on where the whole batch leaves it (as Postgres's CHECK constraints do after ledger_apply).
    for (const account of accounts.values()) checkLimits(account);
    for (const [id, account] of accounts) this.accountsById.set(id, account);
    for (const [id, transfer] of created) this.transfersById.set(id, transfer);
    for (const [pendingId, id] of resolved) this.resolvedBy.set(pendingId, id);
    this.sequence = sequence;
    return results;
  }
}

/** The balance rules: what Postgres's CHECK constraints say, counting pending amounts. */
const checkLimits = (a: Account): void => {
  if (a.flags.debitsMustNotExceedCredits && a.debitsPending + a.debitsPosted > a.creditsPosted)
    throw new LedgerError('EXCEEDS_CREDITS', `account ${a.id} would be overdrawn`);
  if (a.flags.creditsMustNotExceedDebits && a.creditsPending + a.creditsPosted > a.debitsPosted)
    throw new LedgerError('EXCEEDS_DEBITS', `account ${a.id}: credits would exceed debits`);
};
