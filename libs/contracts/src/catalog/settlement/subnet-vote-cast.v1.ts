import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { ProposalIdSchema, VoteChoiceSchema } from './subnet-governance.schemas';

export const SubnetVoteCast = defineEvent({
  type: 'subnet.vote-cast',
  version: 1,
  subject: 'settlement.subnet.vote-cast.v1',
  stream: SettlementStream.name,
  description:
    "A vote counted with the voter's stake at the time; a later vote by the same voter replaces it.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    proposalId: ProposalIdSchema,
    voterId: EntityIdSchema,
    choice: VoteChoiceSchema,
    weight: MinorUnitsSchema,
    castAt: TimestampSchema,
  }),
});
