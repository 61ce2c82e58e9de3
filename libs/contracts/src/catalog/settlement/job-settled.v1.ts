import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const JobOutcomeSchema = z.enum(['completed', 'failed', 'cancelled']);

export const JobSettled = defineEvent({
  type: 'job.settled',
  version: 1,
  subject: 'settlement.job.settled.v1',
  stream: SettlementStream.name,
  description:
    'Providers, subnet and platform were paid and the rest refunded: funded = paid + fees + refunded.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    subnetId: EntityIdSchema,
    asset: AssetSchema,
    outcome: JobOutcomeSchema,
    funded: MinorUnitsSchema,
    paidToProviders: MinorUnitsSchema,
    subnetFees: MinorUnitsSchema,
    platformFees: MinorUnitsSchema,
    refunded: MinorUnitsSchema,
    providers: z.array(
      z.strictObject({
        providerId: EntityIdSchema,
        gpuSecondsBilled: z.int().min(0),
        paid: MinorUnitsSchema,
        subnetFee: MinorUnitsSchema,
        platformFee: MinorUnitsSchema,
        /** Accrued for this provider but not paid, because of its fault. */
        forfeited: MinorUnitsSchema,
      }),
    ),
    /**
     * What each provider passed on to its delegators, pro rata to stake at settlement (transfer
     * `reward-share:<job>:<provider>:<delegator>`, the provider's payable to the delegator's).
     */
    delegatorShares: z
      .array(
        z.strictObject({ providerId: EntityIdSchema, delegatorId: EntityIdSchema, amount: MinorUnitsSchema }),
      )
      .optional(),
    settledAt: TimestampSchema,
  }),
});
