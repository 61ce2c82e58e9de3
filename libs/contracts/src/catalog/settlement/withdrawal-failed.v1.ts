import { z } from 'zod';
import { defineEvent } from '../../message';
import { TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { withdrawalFields } from './withdrawal.schemas';

export const WithdrawalFailed = defineEvent({
  type: 'withdrawal.failed',
  version: 1,
  subject: 'settlement.withdrawal.failed.v1',
  stream: SettlementStream.name,
  description: 'The chain refused the withdrawal; the hold was voided and the funds are available again.',
  schema: z.strictObject({ ...withdrawalFields, reason: z.string().max(1024), failedAt: TimestampSchema }),
});
