import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { ProposalIdSchema } from './subnet-governance.schemas';

export const SubnetProposalDecided = defineEvent({
  type: 'subnet.proposal-decided',
  version: 1,
  subject: 'settlement.subnet.proposal-decided.v1',
  stream: SettlementStream.name,
  description:
    'Voting closed: passed (its change takes effect at `takesEffectAt`) or rejected (quorum or threshold not met).',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    proposalId: ProposalIdSchema,
    outcome: z.enum(['passed', 'rejected']),
    reason: z.enum(['threshold-met', 'quorum-not-met', 'threshold-not-met', 'superseded']),
    yes: MinorUnitsSchema,
    no: MinorUnitsSchema,
    abstain: MinorUnitsSchema,
    electorate: MinorUnitsSchema,
    /** When a passed change applies; null when rejected. */
    takesEffectAt: TimestampSchema.nullable(),
    decidedAt: TimestampSchema,
  }),
});
