import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const SubnetRequestRejected = defineEvent({
  type: 'subnet.request-rejected',
  version: 1,
  subject: 'settlement.subnet.request-rejected.v1',
  stream: SettlementStream.name,
  description: 'A subnet request (create, update, join, leave) was refused, with the reason.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    request: z.enum(['create', 'update-parameters', 'join', 'leave']),
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
    ]),
    message: z.string().max(1024),
    rejectedAt: TimestampSchema,
  }),
});
