import { z } from 'zod';
import { defineQuery } from '../../query';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SubnetParametersSchema } from './subnet-parameters.schemas';
import { SubnetRequestRejected } from './subnet-request-rejected.v1';

/** The last request on the subnet that settlement refused (`subnet.request-rejected`), with why. */
export const SubnetRejectionSchema = SubnetRequestRejected.schema.pick({
  request: true,
  requesterId: true,
  reason: true,
  message: true,
  rejectedAt: true,
});

export const SubnetEconomicsQuery = defineQuery({
  name: 'settlement.subnet-economics',
  version: 1,
  description: "A subnet's parameters, stake, treasury, members and settled volume.",
  request: z.strictObject({ subnetId: EntityIdSchema }),
  response: z.strictObject({
    subnetId: EntityIdSchema,
    exists: z.boolean(),
    ownerId: EntityIdSchema.nullable(),
    asset: AssetSchema.nullable(),
    version: z.int().min(0),
    parameters: SubnetParametersSchema.nullable(),
    ownerStake: MinorUnitsSchema,
    treasury: MinorUnitsSchema,
    providers: z.array(
      z.strictObject({
        providerId: EntityIdSchema,
        stake: MinorUnitsSchema,
        status: z.enum(['active', 'unbonding', 'released']),
        unbondsAt: TimestampSchema.nullable(),
        slashed: MinorUnitsSchema,
      }),
    ),
    totalProviderStake: MinorUnitsSchema,
    jobsSettled: z.int().min(0),
    paidToProviders: MinorUnitsSchema,
    subnetFees: MinorUnitsSchema,
    /**
     * The last refused request (a creation refused leaves `exists: false` and says why here); null
     * when none. The gateway shows it to its requester only.
     */
    lastRejection: SubnetRejectionSchema.nullable().optional(),
  }),
});
