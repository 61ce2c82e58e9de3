import { z } from 'zod';
import { defineEvent } from '../../message';
import { TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { withdrawalFields } from './withdrawal.schemas';

export const WithdrawalCompleted = defineEvent({
  type: 'withdrawal.completed',
  version: 1,
  subject: 'settlement.withdrawal.completed.v1',
  stream: SettlementStream.name,
  description: 'The chain confirmed the withdrawal; the hold was posted.',
  schema: z.strictObject({
    ...withdrawalFields,
    chainTxId: z.string().min(1).max(128),
    completedAt: TimestampSchema,
  }),
});
