import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';
import { SubnetParametersSchema } from './subnet-parameters.schemas';

export const SubnetCreateRequested = defineEvent({
  type: 'subnet.create-requested',
  version: 1,
  subject: 'gateway.subnet.create-requested.v1',
  stream: GatewayStream.name,
  description: 'Someone asked to create a subnet, locking `stake` from their wallet.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    ownerId: EntityIdSchema,
    asset: AssetSchema,
    stake: MinorUnitsSchema,
    parameters: SubnetParametersSchema,
    requestedAt: TimestampSchema,
  }),
});
