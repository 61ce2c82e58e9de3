import { z } from 'zod';
import { defineQuery } from '../../query';
import { AccountBalanceSchema, AccountIdSchema, LedgerLegSchema } from './ledger.schemas';

export const AccountStatementQuery = defineQuery({
  name: 'settlement.account-statement',
  version: 1,
  description: "One account's entries in ledger order, a page at a time, with its balance.",
  request: z.strictObject({
    accountId: AccountIdSchema,
    /** Entries after this ledger sequence (paging). Default 0. */
    afterSequence: z.int().min(0).default(0),
    limit: z.int().min(1).max(1000).default(100),
  }),
  response: z.strictObject({
    account: AccountBalanceSchema.nullable(),
    entries: z.array(LedgerLegSchema.extend({ direction: z.enum(['debit', 'credit']) })),
    /** Pass as `afterSequence` for the next page; null when this was the last. */
    nextAfterSequence: z.int().nullable(),
  }),
});
