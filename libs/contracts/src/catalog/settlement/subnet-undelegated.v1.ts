import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetUndelegated = defineEvent({
  type: 'subnet.undelegated',
  version: 1,
  subject: 'settlement.subnet.undelegated.v1',
  stream: SettlementStream.name,
  description: 'A delegation unbonds until `unbondsAt` (still slashable); it then goes back to the wallet.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    delegatorId: EntityIdSchema,
    providerId: EntityIdSchema,
    amount: MinorUnitsSchema,
    undelegatedAt: TimestampSchema,
    unbondsAt: TimestampSchema,
  }),
});
