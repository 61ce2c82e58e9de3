import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, SignedMinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const ReconciliationMismatched = defineEvent({
  type: 'ledger.reconciliation-mismatched',
  version: 1,
  subject: 'settlement.ledger.reconciliation-mismatched.v1',
  stream: SettlementStream.name,
  description:
    "The ledger does not add up: an asset's accounts do not sum to zero, or custody on chain differs.",
  schema: z.strictObject({
    asset: AssetSchema,
    kind: z.enum(['ledger-unbalanced', 'custody-mismatch']),
    /** Ledger side: the sum of all accounts (unbalanced) or the chain clearing account's balance. */
    ledger: SignedMinorUnitsSchema,
    /** The chain adapter's custody balance (custody-mismatch), else 0. */
    custody: SignedMinorUnitsSchema,
    difference: SignedMinorUnitsSchema,
    chain: z.string().max(64),
    checkedAt: TimestampSchema,
  }),
});
