/**
 * A transfer moves `amount` from one account (debit) to another (credit) in one asset's ledger.
 * Transfers are immutable; their ids are chosen by us, deterministically, from what caused them
 * (`escrow-fund:<job>`, `usage:<job>:<provider>:<seq>:charge` …), so a redelivered message can
 * never move money twice: the ledger answers `exists`.
 *
 * Two-phase (TigerBeetle): a `pending` transfer reserves the amount on both accounts; later one
 * `post-pending` (of at most the pending amount — the rest is released) or one `void-pending`
 * resolves it, at most once.
 */
export type TransferKind = 'posted' | 'pending' | 'post-pending' | 'void-pending';

/** Why money moved; a post or void keeps its pending transfer's code. */
export type TransferCode =
  | 'deposit'
  | 'withdrawal'
  | 'escrow-fund'
  | 'usage-charge'
  | 'fee-subnet'
  | 'fee-platform'
  | 'refund'
  | 'stake-lock'
  | 'stake-release'
  | 'slash'
  /** A delegator's share of a provider's pay: the provider's payable to the delegator's. */
  | 'reward-share';

export interface Transfer {
  readonly id: string;
  readonly debitAccountId: string;
  readonly creditAccountId: string;
  readonly amount: bigint;
  readonly kind: TransferKind;
  /** The pending transfer a `post-pending` or `void-pending` resolves; null otherwise. */
  readonly pendingId: string | null;
  readonly code: TransferCode;
  /** The job the transfer belongs to, for per-job statements. */
  readonly jobId: string | null;
  /** When the decision behind it was taken (from the event, so replays are identical). */
  readonly at: string;
}

/** The four balances TigerBeetle keeps per account. */
export interface AccountBalances {
  readonly debitsPending: bigint;
  readonly debitsPosted: bigint;
  readonly creditsPending: bigint;
  readonly creditsPosted: bigint;
}

export const ZERO_BALANCES: AccountBalances = {
  debitsPending: 0n,
  debitsPosted: 0n,
  creditsPending: 0n,
  creditsPosted: 0n,
};

/** What a credit-normal account can still spend: posted credits − posted debits − pending debits. */
export const availableOf = (b: AccountBalances): bigint => b.creditsPosted - b.debitsPosted - b.debitsPending;

/** The posted balance of a credit-normal account. */
export const postedOf = (b: AccountBalances): bigint => b.creditsPosted - b.debitsPosted;

/** The outcome of one transfer of a batch. */
export type TransferResult = 'created' | 'exists';

/** Whether two transfers with the same id are the same transfer (idempotent retry) or a conflict. */
export const sameTransfer = (a: Transfer, b: Transfer): boolean =>
  a.id === b.id &&
  a.debitAccountId === b.debitAccountId &&
  a.creditAccountId === b.creditAccountId &&
  a.amount === b.amount &&
  a.kind === b.kind &&
  a.pendingId === b.pendingId &&
  a.code === b.code;
