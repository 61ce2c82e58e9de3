import { z } from 'zod';
import { defineQuery } from '../../query';
import { AssetSchema, EntityIdSchema } from '../primitives';
import { AccountBalanceSchema, AccountIdSchema } from './ledger.schemas';

export const SettlementBalancesQuery = defineQuery({
  name: 'settlement.balances',
  version: 1,
  description:
    "An owner's accounts (all purposes) or the given accounts, with posted, pending and available.",
  request: z
    .strictObject({
      ownerId: EntityIdSchema.optional(),
      accountIds: z.array(AccountIdSchema).max(500).optional(),
      asset: AssetSchema.optional(),
    })
    .refine((r) => r.ownerId !== undefined || (r.accountIds?.length ?? 0) > 0, 'give ownerId or accountIds'),
  response: z.strictObject({ accounts: z.array(AccountBalanceSchema) }),
});
