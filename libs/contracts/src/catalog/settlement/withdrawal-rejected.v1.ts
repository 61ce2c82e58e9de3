import { z } from 'zod';
import { defineEvent } from '../../message';
import { MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { withdrawalFields } from './withdrawal.schemas';

export const WithdrawalRejected = defineEvent({
  type: 'withdrawal.rejected',
  version: 1,
  subject: 'settlement.withdrawal.rejected.v1',
  stream: SettlementStream.name,
  description: 'The withdrawal exceeds the available balance; nothing was held.',
  schema: z.strictObject({
    ...withdrawalFields,
    available: MinorUnitsSchema,
    rejectedAt: TimestampSchema,
  }),
});
