import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetProviderJoined = defineEvent({
  type: 'subnet.provider-joined',
  version: 1,
  subject: 'settlement.subnet.provider-joined.v1',
  stream: SettlementStream.name,
  description: 'A provider joined a subnet; its stake is locked.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    stake: MinorUnitsSchema,
    joinedAt: TimestampSchema,
  }),
});
