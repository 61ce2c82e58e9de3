import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetProviderLeft = defineEvent({
  type: 'subnet.provider-left',
  version: 1,
  subject: 'settlement.subnet.provider-left.v1',
  stream: SettlementStream.name,
  description: 'A provider left; its stake unbonds until `unbondsAt` and can still be slashed until then.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    leftAt: TimestampSchema,
    unbondsAt: TimestampSchema,
  }),
});
