import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, FaultKindSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { SlashDestinationSchema, SlashIdSchema, SlashShareSchema } from './subnet-governance.schemas';

export const SubnetProviderSlashed = defineEvent({
  type: 'subnet.provider-slashed',
  version: 1,
  subject: 'settlement.subnet.provider-slashed.v1',
  stream: SettlementStream.name,
  description:
    "A slash was taken: part of a provider's stake (and its delegations', pro rata) went where the subnet says (≤ the stake).",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    /** The job the fault happened in; null for evidence outside a job (a failed challenge). */
    jobId: EntityIdSchema.nullable(),
    kind: FaultKindSchema,
    amount: MinorUnitsSchema,
    stakeBefore: MinorUnitsSchema,
    slashedAt: TimestampSchema,
    /** The slash (absent in events from before slashes were held for appeal). */
    slashId: SlashIdSchema.optional(),
    /** Who lost what (absent: the provider alone lost `amount`). */
    shares: z.array(SlashShareSchema).optional(),
    /** Where it went (absent: the treasury). */
    destination: SlashDestinationSchema.optional(),
    beneficiaryId: EntityIdSchema.nullable().optional(),
  }),
});
