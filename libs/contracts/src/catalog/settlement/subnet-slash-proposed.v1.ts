import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { BasisPointsSchema } from './settlement.schemas';
import {
  SlashDestinationSchema,
  SlashEvidenceSchema,
  SlashIdSchema,
  SlashShareSchema,
} from './subnet-governance.schemas';

export const SubnetSlashProposed = defineEvent({
  type: 'subnet.slash-proposed',
  version: 1,
  subject: 'settlement.subnet.slash-proposed.v1',
  stream: SettlementStream.name,
  description:
    'Evidence against a member: its slash is held on the stakes (pending transfers) until `appealUntil`, then taken unless an appeal overturned it. The provider is jailed until `jailedUntil`.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    slashId: SlashIdSchema,
    providerId: EntityIdSchema,
    evidence: SlashEvidenceSchema,
    /** The slashing table's share for the fault kind. */
    bps: BasisPointsSchema,
    /** Total slashed: bps of the provider's stake plus its delegations, never above them. */
    amount: MinorUnitsSchema,
    /** The amount split pro rata over the provider's stake and each delegation (remainders to the provider's). */
    shares: z.array(SlashShareSchema).min(1),
    destination: SlashDestinationSchema,
    /** The harmed tenant, for `refund-tenant` (null: the treasury takes it). */
    beneficiaryId: EntityIdSchema.nullable(),
    appealUntil: TimestampSchema,
    jailedUntil: TimestampSchema,
    proposedAt: TimestampSchema,
  }),
});
