import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';

export const SubnetUndelegationRequested = defineEvent({
  type: 'subnet.undelegation-requested',
  version: 1,
  subject: 'gateway.subnet.undelegation-requested.v1',
  stream: GatewayStream.name,
  description:
    "A delegator asked for its whole delegation to a provider back: it unbonds for the subnet's unbonding period, still slashable.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    delegatorId: EntityIdSchema,
    providerId: EntityIdSchema,
    requestedAt: TimestampSchema,
  }),
});
