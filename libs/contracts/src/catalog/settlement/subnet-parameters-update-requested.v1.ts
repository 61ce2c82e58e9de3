import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';
import { SubnetParametersSchema } from './subnet-parameters.schemas';

export const SubnetParametersUpdateRequested = defineEvent({
  type: 'subnet.parameters-update-requested',
  version: 1,
  subject: 'gateway.subnet.parameters-update-requested.v1',
  stream: GatewayStream.name,
  description: "A subnet's owner asked to change its parameters (a new version, for new jobs).",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    ownerId: EntityIdSchema,
    parameters: SubnetParametersSchema,
    requestedAt: TimestampSchema,
  }),
});
