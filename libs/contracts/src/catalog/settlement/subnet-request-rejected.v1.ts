import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetRequestRejected = defineEvent({
  type: 'subnet.request-rejected',
  version: 1,
  subject: 'settlement.subnet.request-rejected.v1',
  stream: SettlementStream.name,
  description:
    'A subnet request (create, update, join, leave, propose, vote, delegate, undelegate) was refused, with the reason.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    request: z.enum([
      'create',
      'update-parameters',
      'join',
      'leave',
      'propose',
      'vote',
      'delegate',
      'undelegate',
    ]),
    /** Who asked: the owner, or the provider. */
    requesterId: EntityIdSchema,
    reason: z.enum([
      'already-exists',
      'unknown-subnet',
      'not-owner',
      'insufficient-funds',
      'stake-below-minimum',
      'not-allowed',
      'already-member',
      'not-member',
      'invalid-parameters',
      /** A proposal in an owner-governed subnet (other than an appeal), or an owner's direct update in a stake-vote one. */
      'governance-mode',
      'unknown-proposal',
      'proposal-exists',
      'voting-closed',
      'not-a-voter',
      'unknown-slash',
      'appeal-closed',
      'not-delegated',
    ]),
    message: z.string().max(1024),
    rejectedAt: TimestampSchema,
  }),
});
