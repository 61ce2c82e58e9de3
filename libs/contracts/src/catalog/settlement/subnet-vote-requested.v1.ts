import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';
import { ProposalIdSchema, VoteChoiceSchema } from './subnet-governance.schemas';

export const SubnetVoteRequested = defineEvent({
  type: 'subnet.vote-requested',
  version: 1,
  subject: 'gateway.subnet.vote-requested.v1',
  stream: GatewayStream.name,
  description: 'A member voted on an open proposal (its latest vote before the close counts).',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    proposalId: ProposalIdSchema,
    voterId: EntityIdSchema,
    choice: VoteChoiceSchema,
    requestedAt: TimestampSchema,
  }),
});
