import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { SubnetParametersSchema } from './subnet-parameters.schemas';

export const SubnetParametersUpdated = defineEvent({
  type: 'subnet.parameters-updated',
  version: 1,
  subject: 'settlement.subnet.parameters-updated.v1',
  stream: SettlementStream.name,
  description: 'A new parameters version; it applies to jobs funded after it, never to running ones.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    version: z.int().min(2),
    parameters: SubnetParametersSchema,
    updatedAt: TimestampSchema,
    /** The proposal that changed it (absent: its owner did). */
    proposalId: EntityIdSchema.optional(),
  }),
});
