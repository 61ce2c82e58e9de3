import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetDelegationReleased = defineEvent({
  type: 'subnet.delegation-released',
  version: 1,
  subject: 'settlement.subnet.delegation-released.v1',
  stream: SettlementStream.name,
  description: "An unbonded delegation (what slashes left of it) went back to the delegator's wallet.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    delegatorId: EntityIdSchema,
    providerId: EntityIdSchema,
    amount: MinorUnitsSchema,
    releasedAt: TimestampSchema,
  }),
});
