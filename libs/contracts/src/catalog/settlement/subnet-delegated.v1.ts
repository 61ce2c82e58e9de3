import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetDelegated = defineEvent({
  type: 'subnet.delegated',
  version: 1,
  subject: 'settlement.subnet.delegated.v1',
  stream: SettlementStream.name,
  description: "Stake delegated to a provider, locked from the delegator's wallet (transfer `delegate:…`).",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    delegatorId: EntityIdSchema,
    providerId: EntityIdSchema,
    amount: MinorUnitsSchema,
    /** The delegation's total after this one. */
    total: MinorUnitsSchema,
    delegatedAt: TimestampSchema,
  }),
});
