/** Why the ledger refused a batch. The Postgres ledger raises the same codes (infra maps SQLSTATEs). */
export type LedgerErrorCode =
  | 'INVALID_ACCOUNT_ID'
  | 'ACCOUNTS_MUST_BE_DIFFERENT'
  | 'ASSET_MISMATCH'
  | 'INVALID_AMOUNT'
  | 'EXISTS_WITH_DIFFERENT_FIELDS'
  | 'PENDING_ID_MISSING'
  | 'PENDING_ID_NOT_ALLOWED'
  | 'PENDING_TRANSFER_NOT_FOUND'
  | 'PENDING_TRANSFER_NOT_PENDING'
  | 'PENDING_TRANSFER_ALREADY_RESOLVED'
  | 'PENDING_TRANSFER_HAS_DIFFERENT_ACCOUNTS'
  | 'EXCEEDS_PENDING_AMOUNT'
  | 'EXCEEDS_CREDITS'
  | 'EXCEEDS_DEBITS';

/**
 * A batch broke a ledger rule; nothing of it was applied. Deciders never produce such batches, so
 * this is a broken invariant (a bug, or a race the database caught), never a business outcome:
 * not retryable, except `EXCEEDS_*` after a concurrent writer changed a balance (the caller
 * decides again on fresh balances).
 */
export class LedgerError extends Error {
  override readonly name = 'LedgerError';
  readonly retryable = false;
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
    /** The transfer that broke the rule. */
    readonly transferId?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isLedgerError = (e: unknown): e is LedgerError => e instanceof LedgerError;
