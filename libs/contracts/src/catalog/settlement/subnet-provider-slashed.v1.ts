import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, FaultKindSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetProviderSlashed = defineEvent({
  type: 'subnet.provider-slashed',
  version: 1,
  subject: 'settlement.subnet.provider-slashed.v1',
  stream: SettlementStream.name,
  description: "Part of a provider's stake went to the subnet's treasury for a verified fault (≤ the stake).",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    jobId: EntityIdSchema,
    kind: FaultKindSchema,
    amount: MinorUnitsSchema,
    stakeBefore: MinorUnitsSchema,
    slashedAt: TimestampSchema,
  }),
});
