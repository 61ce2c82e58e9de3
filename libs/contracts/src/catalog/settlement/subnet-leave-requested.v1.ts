import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';

export const SubnetLeaveRequested = defineEvent({
  type: 'subnet.leave-requested',
  version: 1,
  subject: 'gateway.subnet.leave-requested.v1',
  stream: GatewayStream.name,
  description: 'A provider asked to leave a subnet; its stake unbonds.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    requestedAt: TimestampSchema,
  }),
});
