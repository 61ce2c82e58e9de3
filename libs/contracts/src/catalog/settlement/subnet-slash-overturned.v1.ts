import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { ProposalIdSchema, SlashIdSchema } from './subnet-governance.schemas';

export const SubnetSlashOverturned = defineEvent({
  type: 'subnet.slash-overturned',
  version: 1,
  subject: 'settlement.subnet.slash-overturned.v1',
  stream: SettlementStream.name,
  description: 'An appeal passed: the held slash is voided and the jail lifted.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    slashId: SlashIdSchema,
    providerId: EntityIdSchema,
    proposalId: ProposalIdSchema,
    overturnedAt: TimestampSchema,
  }),
});
