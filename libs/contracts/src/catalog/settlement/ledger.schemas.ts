import { z } from 'zod';
import { AssetSchema, MinorUnitsSchema, SignedMinorUnitsSchema, TimestampSchema } from '../primitives';

/**
 * Account ids read `<asset>:<purpose>:<owner>`, e.g. `NTX:wallet:tenant-1`, `NTX:escrow:job-42`;
 * striped accounts (platform fees, subnet treasuries) add `#<stripe>`: `NTX:fees:platform#0a`; a
 * delegation's stake is owned by `<delegator>@<subnet>@<provider>`.
 */
export const AccountIdSchema = z
  .string()
  .regex(
    /^[A-Z][A-Z0-9]{1,11}:[a-z]+:[A-Za-z0-9_@-]{1,386}(#[0-9a-f]{2})?$/,
    'must be an account id <asset>:<purpose>:<owner>',
  );

export const AccountPurposeSchema = z.enum([
  'wallet',
  'escrow',
  'payable',
  'treasury',
  'fees',
  'stake',
  /** A subnet's burned slashes: in custody, never withdrawable. */
  'burn',
  'chain',
]);

export const AccountBalanceSchema = z.strictObject({
  accountId: AccountIdSchema,
  asset: AssetSchema,
  purpose: AccountPurposeSchema,
  ownerId: z.string(),
  debitsPending: MinorUnitsSchema,
  debitsPosted: MinorUnitsSchema,
  creditsPending: MinorUnitsSchema,
  creditsPosted: MinorUnitsSchema,
  /** Posted balance on the account's normal side (credits − debits; debits − credits for `chain`). */
  balance: SignedMinorUnitsSchema,
  /** `balance` less pending amounts leaving the account: what can be spent now. */
  available: SignedMinorUnitsSchema,
});

export const LedgerLegSchema = z.strictObject({
  transferId: z.string(),
  /** Order of recording in the ledger. */
  sequence: z.int().min(1),
  kind: z.enum(['posted', 'pending', 'post-pending', 'void-pending']),
  code: z.string(),
  debitAccountId: AccountIdSchema,
  creditAccountId: AccountIdSchema,
  amount: MinorUnitsSchema,
  pendingId: z.string().nullable(),
  jobId: z.string().nullable(),
  at: TimestampSchema,
});
