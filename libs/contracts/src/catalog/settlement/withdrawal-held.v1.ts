import { z } from 'zod';
import { defineEvent } from '../../message';
import { TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { withdrawalFields } from './withdrawal.schemas';

export const WithdrawalHeld = defineEvent({
  type: 'withdrawal.held',
  version: 1,
  subject: 'settlement.withdrawal.held.v1',
  stream: SettlementStream.name,
  description: 'The amount is held (pending) and sent to the chain; it is posted on confirmation.',
  schema: z.strictObject({
    ...withdrawalFields,
    destination: z.string().min(1).max(256),
    heldAt: TimestampSchema,
  }),
});
