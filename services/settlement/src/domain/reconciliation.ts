import type { Decider, DomainEvent, PayloadOf, ReconciliationMismatched } from '@gpunet/contracts';
import type { Account } from './ledger/ledger';
import { toWire } from './money';

export type ReconciliationEvent = DomainEvent<
  'ledger.reconciliation-mismatched',
  PayloadOf<typeof ReconciliationMismatched>
>;

/** One asset's ledger, summed. */
export interface AssetTotals {
  readonly asset: string;
  /** Σ (credits posted − debits posted) over every account: zero in a double-entry ledger. */
  readonly posted: bigint;
  /** Σ (credits pending − debits pending): zero too. */
  readonly pending: bigint;
  /** The chain clearing account's posted balance (debits − credits): what we hold in custody. */
  readonly custodyOnLedger: bigint;
}

export const totalsOf = (asset: string, accounts: readonly Account[]): AssetTotals => {
  let posted = 0n;
  let pending = 0n;
  let custodyOnLedger = 0n;
  for (const a of accounts) {
    if (a.asset !== asset) continue;
    posted += a.creditsPosted - a.debitsPosted;
    pending += a.creditsPending - a.debitsPending;
    if (a.purpose === 'chain') custodyOnLedger += a.debitsPosted - a.creditsPosted;
  }
  return { asset, posted, pending, custodyOnLedger };
};

/**
 * Checks one asset: its accounts sum to zero (posted and pending), and the custody the ledger
 * believes in equals what the chain adapter reports (confirmed, excluding withdrawals in flight).
 * Returns the mismatches as events — a person must look at them; nothing is corrected silently.
 */
export const reconcile = (
  totals: AssetTotals,
  custody: bigint | null,
  chain: string,
  at: string,
): ReconciliationEvent[] => {
  const events: ReconciliationEvent[] = [];
  if (totals.posted !== 0n || totals.pending !== 0n) {
    const ledger = totals.posted !== 0n ? totals.posted : totals.pending;
    events.push({
      type: 'ledger.reconciliation-mismatched',
      data: {
        asset: totals.asset,
        kind: 'ledger-unbalanced',
        ledger: toWire(ledger),
        custody: '0',
        difference: toWire(ledger),
        chain,
        checkedAt: at,
      },
    });
  }
  if (custody !== null && custody !== totals.custodyOnLedger) {
    events.push({
      type: 'ledger.reconciliation-mismatched',
      data: {
        asset: totals.asset,
        kind: 'custody-mismatch',
        ledger: toWire(totals.custodyOnLedger),
        custody: toWire(custody),
        difference: toWire(custody - totals.custodyOnLedger),
        chain,
        checkedAt: at,
      },
    });
  }
  return events;
};

/** Check one asset now (stream `reconciliation-<asset>`): its totals, read under the stream's lock. */
export interface Reconcile {
  readonly type: 'Reconcile';
  readonly totals: AssetTotals;
  /** What the chain adapter reports in custody; null: it cannot say. */
  readonly custody: bigint | null;
  readonly chain: string;
  readonly at: string;
}

export interface ReconciliationState {
  /** Mismatches raised so far. */
  readonly mismatches: number;
}

/** Reconciliation as a decider: every check decides afresh from the totals; the stream is its record. */
export const reconciliationDecider: Decider<Reconcile, ReconciliationEvent, ReconciliationState> = {
  initialState: { mismatches: 0 },
  decide: (command) => reconcile(command.totals, command.custody, command.chain, command.at),
  evolve: (state) => ({ mismatches: state.mismatches + 1 }),
};
