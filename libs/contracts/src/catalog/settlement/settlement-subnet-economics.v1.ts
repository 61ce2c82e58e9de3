import { z } from 'zod';
import { defineQuery } from '../../query';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SubnetParametersSchema } from './subnet-parameters.schemas';

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
  }),
});
