import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';

export const SubnetJoinRequested = defineEvent({
  type: 'subnet.join-requested',
  version: 1,
  subject: 'gateway.subnet.join-requested.v1',
  stream: GatewayStream.name,
  description: 'A provider asked to join a subnet, locking `stake` from its wallet.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    stake: MinorUnitsSchema,
    requestedAt: TimestampSchema,
  }),
});
