import { DomainError } from '@gpunet/contracts';

/**
 * What an account is for. Every account belongs to one (owner, purpose, asset):
 * - `wallet`   — an owner's spendable balance (orchestrators pay from it; deposits land in it)
 * - `escrow`   — one job's budget, held from the tenant's wallet until the job settles
 * - `payable`  — what a provider has earned (withdrawable)
 * - `treasury` — a subnet's fee income and slashed stake
 * - `fees`     — the platform's fee income
 * - `stake`    — stake a subnet owner or provider has locked in one subnet
 * - `chain`    — the clearing account of the asset's custody on chain (debit-normal)
 */
export type AccountPurpose = 'wallet' | 'escrow' | 'payable' | 'treasury' | 'fees' | 'stake' | 'chain';

const PURPOSES: ReadonlySet<string> = new Set<AccountPurpose>([
  'wallet',
  'escrow',
  'payable',
  'treasury',
  'fees',
  'stake',
  'chain',
]);

/** Balance rules of an account, enforced by the ledger counting pending amounts (TigerBeetle's flags). */
export interface AccountFlags {
  /** Credit-normal: debits (pending + posted) never exceed posted credits — no overdraft. */
  readonly debitsMustNotExceedCredits: boolean;
  /** Debit-normal: credits (pending + posted) never exceed posted debits. */
  readonly creditsMustNotExceedDebits: boolean;
}

export interface AccountSpec {
  readonly id: string;
  readonly asset: string;
  readonly purpose: AccountPurpose;
  readonly owner: string;
  readonly flags: AccountFlags;
}

const CREDIT_NORMAL: AccountFlags = { debitsMustNotExceedCredits: true, creditsMustNotExceedDebits: false };
const DEBIT_NORMAL: AccountFlags = { debitsMustNotExceedCredits: false, creditsMustNotExceedDebits: true };

/** Every purpose but the chain clearing account is credit-normal and may never be overdrawn. */
export const flagsOf = (purpose: AccountPurpose): AccountFlags =>
  purpose === 'chain' ? DEBIT_NORMAL : CREDIT_NORMAL;

/** `<asset>:<purpose>:<owner>` — readable, deterministic, and it says which ledger it is in. */
export const accountId = (asset: string, purpose: AccountPurpose, owner: string): string =>
  `${asset}:${purpose}:${owner}`;

const ACCOUNT_ID = /^([A-Z][A-Z0-9]{1,11}):([a-z]+):([A-Za-z0-9_@-]{1,260})$/;

/** The account an id names; the id alone determines its asset, purpose, owner and balance rules. */
export const accountSpec = (id: string): AccountSpec => {
  const match = ACCOUNT_ID.exec(id);
  if (!match || !PURPOSES.has(match[2]!))
    throw new DomainError('INVALID_ACCOUNT_ID', `not an account id <asset>:<purpose>:<owner>: ${id}`);
  const purpose = match[2] as AccountPurpose;
  return { id, asset: match[1]!, purpose, owner: match[3]!, flags: flagsOf(purpose) };
};

export const walletOf = (asset: string, ownerId: string): string => accountId(asset, 'wallet', ownerId);
export const escrowOf = (asset: string, jobId: string): string => accountId(asset, 'escrow', jobId);
export const payableOf = (asset: string, providerId: string): string =>
  accountId(asset, 'payable', providerId);
export const treasuryOf = (asset: string, subnetId: string): string => accountId(asset, 'treasury', subnetId);
export const platformFeesOf = (asset: string): string => accountId(asset, 'fees', 'platform');
export const stakeOf = (asset: string, participantId: string, subnetId: string): string =>
  accountId(asset, 'stake', `${participantId}@${subnetId}`);
export const chainClearingOf = (asset: string): string => accountId(asset, 'chain', 'custody');
