import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetStakeReleased = defineEvent({
  type: 'subnet.stake-released',
  version: 1,
  subject: 'settlement.subnet.stake-released.v1',
  stream: SettlementStream.name,
  description: "An unbonded provider's remaining stake went back to its wallet.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    amount: MinorUnitsSchema,
    releasedAt: TimestampSchema,
  }),
});
