import { z } from 'zod';
import { defineQuery } from '../../query';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema } from '../primitives';
import { LedgerLegSchema } from './ledger.schemas';

export const JobStatementQuery = defineQuery({
  name: 'settlement.job-statement',
  version: 1,
  description: "A job's money: escrow, accruals, payments, fees, refund — and every ledger leg.",
  request: z.strictObject({ jobId: EntityIdSchema }),
  response: z.strictObject({
    jobId: EntityIdSchema,
    status: z.enum(['unknown', 'funded', 'rejected', 'settled']),
    tenantId: EntityIdSchema.nullable(),
    subnetId: EntityIdSchema.nullable(),
    asset: AssetSchema.nullable(),
    funded: MinorUnitsSchema,
    paidToProviders: MinorUnitsSchema,
    subnetFees: MinorUnitsSchema,
    platformFees: MinorUnitsSchema,
    refunded: MinorUnitsSchema,
    /** Accrued but not yet posted or voided. */
    pending: MinorUnitsSchema,
    /** Posted balance left in the job's escrow account. */
    escrowBalance: MinorUnitsSchema,
    legs: z.array(LedgerLegSchema),
  }),
});
