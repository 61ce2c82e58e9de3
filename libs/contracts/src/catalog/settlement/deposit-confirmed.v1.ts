import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const DepositConfirmed = defineEvent({
  type: 'deposit.confirmed',
  version: 1,
  subject: 'settlement.deposit.confirmed.v1',
  stream: SettlementStream.name,
  description: "A deposit reached its confirmations on chain and was credited to the owner's wallet.",
  schema: z.strictObject({
    depositId: z.string().min(1).max(200),
    asset: AssetSchema,
    ownerId: EntityIdSchema,
    amount: MinorUnitsSchema,
    /** The chain adapter that observed it (`simulated` in development and tests, `cardano`). */
    chain: z.string().min(1).max(64),
    chainTxId: z.string().min(1).max(128),
    confirmations: z.int().min(0),
    confirmedAt: TimestampSchema,
  }),
});
