import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { SubnetParametersSchema } from './subnet-parameters.schemas';

export const SubnetCreated = defineEvent({
  type: 'subnet.created',
  version: 1,
  subject: 'settlement.subnet.created.v1',
  stream: SettlementStream.name,
  description: "A subnet exists; its owner's stake is locked. Parameters are version 1.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    ownerId: EntityIdSchema,
    asset: AssetSchema,
    stake: MinorUnitsSchema,
    parameters: SubnetParametersSchema,
    createdAt: TimestampSchema,
  }),
});
