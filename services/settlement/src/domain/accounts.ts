import { DomainError } from '@gpunet/contracts';

/**
 * What an account is for. Every account belongs to one (owner, purpose, asset):
 * - `wallet`   — an owner's spendable balance (orchestrators pay from it; deposits land in it)
 * - `escrow`   — one job's budget, held from the tenant's wallet until the job settles
 * - `payable`  — what a provider has earned (withdrawable)
 * - `treasury` — a subnet's fee income and slashed stake
 * - `fees`     — the platform's fee income
 * - `stake`    — stake a subnet owner or provider has locked in one subnet, or a holder delegates
 *                to one provider of it (`<delegator>@<subnet>@<provider>`)
 * - `burn`     — a subnet's burned slashes: still in custody, never withdrawable or spent
 * - `chain`    — the clearing account of the asset's custody on chain (debit-normal)
 */
export type AccountPurpose =
  'wallet' | 'escrow' | 'payable' | 'treasury' | 'fees' | 'stake' | 'burn' | 'chain';

const PURPOSES: ReadonlySet<string> = new Set<AccountPurpose>([
  'wallet',
  'escrow',
  'payable',
  'treasury',
  'fees',
  'stake',
  'burn',
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
  /** Which stripe of a striped account (platform fees, subnet treasuries), else null. */
  readonly stripe: number | null;
  readonly flags: AccountFlags;
}

const CREDIT_NORMAL: AccountFlags = { debitsMustNotExceedCredits: true, creditsMustNotExceedDebits: false };
const DEBIT_NORMAL: AccountFlags = { debitsMustNotExceedCredits: false, creditsMustNotExceedDebits: true };

/** Every purpose but the chain clearing account is credit-normal and may never be overdrawn. */
export const flagsOf = (purpose: AccountPurpose): AccountFlags =>
  purpose === 'chain' ? DEBIT_NORMAL : CREDIT_NORMAL;

/**
 * `<asset>:<purpose>:<owner>` — readable, deterministic, and it says which ledger it is in — with
 * `#<stripe>` (two hex digits) for the stripes of a striped account.
 */
export const accountId = (asset: string, purpose: AccountPurpose, owner: string, stripe?: number): string =>
  stripe === undefined
    ? `${asset}:${purpose}:${owner}`
    : `${asset}:${purpose}:${owner}#${stripe.toString(16).padStart(2, '0')}`;

/** An owner is at most three entity ids joined by `@` (a delegation's stake): 3 × 128 + 2. */
export const MAX_OWNER_LENGTH = 386;

const ACCOUNT_ID = /^([A-Z][A-Z0-9]{1,11}):([a-z]+):([A-Za-z0-9_@-]{1,386})(?:#([0-9a-f]{2}))?$/;

/** The account an id names; the id alone determines its asset, purpose, owner and balance rules. */
export const accountSpec = (id: string): AccountSpec => {
  const match = ACCOUNT_ID.exec(id);
  if (!match || !PURPOSES.has(match[2]!))
    throw new DomainError('INVALID_ACCOUNT_ID', `not an account id <asset>:<purpose>:<owner>: ${id}`);
  const purpose = match[2] as AccountPurpose;
  return {
    id,
    asset: match[1]!,
    purpose,
    owner: match[3]!,
    stripe: match[4] === undefined ? null : parseInt(match[4], 16),
    flags: flagsOf(purpose),
  };
};

/**
 * Accounts every job credits — the platform's fees, a subnet's treasury — would be one hot row that
 * every settlement in the network waits on (its lock is held through each commit). They are split
 * into stripes; a job always uses the stripe its id hashes to, and a balance is the stripes' sum.
 */
export const STRIPES = 16;

export const stripeOf = (key: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % STRIPES;
};

export const walletOf = (asset: string, ownerId: string): string => accountId(asset, 'wallet', ownerId);
export const escrowOf = (asset: string, jobId: string): string => accountId(asset, 'escrow', jobId);
export const payableOf = (asset: string, providerId: string): string =>
  accountId(asset, 'payable', providerId);
/** The stripe of a subnet's treasury that `stripeKey` (a job id) uses. */
export const treasuryOf = (asset: string, subnetId: string, stripeKey: string): string =>
  accountId(asset, 'treasury', subnetId, stripeOf(stripeKey));
/** The stripe of the platform's fee account that `stripeKey` (a job id) uses. */
export const platformFeesOf = (asset: string, stripeKey: string): string =>
  accountId(asset, 'fees', 'platform', stripeOf(stripeKey));
export const stakeOf = (asset: string, participantId: string, subnetId: string): string =>
  accountId(asset, 'stake', `${participantId}@${subnetId}`);
/** What `delegatorId` delegates to `providerId` in `subnetId`. */
export const delegationOf = (
  asset: string,
  delegatorId: string,
  subnetId: string,
  providerId: string,
): string => accountId(asset, 'stake', `${delegatorId}@${subnetId}@${providerId}`);
/** Where a subnet's burned slashes lie. */
export const burnOf = (asset: string, subnetId: string): string => accountId(asset, 'burn', subnetId);
export const chainClearingOf = (asset: string): string => accountId(asset, 'chain', 'custody');
