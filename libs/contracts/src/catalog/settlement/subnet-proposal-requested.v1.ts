import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, text, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';
import { ProposalChangeSchema, ProposalIdSchema } from './subnet-governance.schemas';

export const SubnetProposalRequested = defineEvent({
  type: 'subnet.proposal-requested',
  version: 1,
  subject: 'gateway.subnet.proposal-requested.v1',
  stream: GatewayStream.name,
  description:
    'A member (owner, provider or delegator) proposed a change to a stake-vote subnet, or a slashed provider appealed.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    proposalId: ProposalIdSchema,
    proposerId: EntityIdSchema,
    title: text(200),
    change: ProposalChangeSchema,
    requestedAt: TimestampSchema,
  }),
});
