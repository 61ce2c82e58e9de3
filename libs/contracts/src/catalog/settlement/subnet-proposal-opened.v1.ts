import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, text, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { ProposalChangeSchema, ProposalIdSchema } from './subnet-governance.schemas';

export const SubnetProposalOpened = defineEvent({
  type: 'subnet.proposal-opened',
  version: 1,
  subject: 'settlement.subnet.proposal-opened.v1',
  stream: SettlementStream.name,
  description: 'A proposal is open for votes until `votingEndsAt`; `electorate` is the stake that may vote.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    proposalId: ProposalIdSchema,
    proposerId: EntityIdSchema,
    title: text(200),
    change: ProposalChangeSchema,
    /** Total voting weight when it opened (owner, providers' and delegators' stake); quorum is a share of it. */
    electorate: MinorUnitsSchema,
    /** `owner`: an appeal in an owner-governed subnet, decided by the owner's vote alone. */
    decidedBy: z.enum(['stake-vote', 'owner']),
    votingEndsAt: TimestampSchema,
    openedAt: TimestampSchema,
  }),
});
