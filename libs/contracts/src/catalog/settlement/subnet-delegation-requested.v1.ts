import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';

export const SubnetDelegationRequested = defineEvent({
  type: 'subnet.delegation-requested',
  version: 1,
  subject: 'gateway.subnet.delegation-requested.v1',
  stream: GatewayStream.name,
  description:
    "A holder asked to delegate stake to a member provider: locked from the holder's wallet, it shares the provider's rewards and slashes pro rata.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    delegatorId: EntityIdSchema,
    providerId: EntityIdSchema,
    /** Added to what the delegator already delegates to this provider. */
    amount: MinorUnitsSchema,
    requestedAt: TimestampSchema,
  }),
});
