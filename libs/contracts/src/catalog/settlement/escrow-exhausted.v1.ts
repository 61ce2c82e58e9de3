import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const EscrowExhausted = defineEvent({
  type: 'escrow.exhausted',
  version: 1,
  subject: 'settlement.escrow.exhausted.v1',
  stream: SettlementStream.name,
  description:
    'A job used more than its escrow covers; usage beyond it is not paid. Execution must stop the job.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    asset: AssetSchema,
    funded: MinorUnitsSchema,
    remaining: MinorUnitsSchema,
    /** Reported GPU-seconds the escrow could not cover, so far. */
    unbilledGpuSeconds: z.int().min(0),
    raisedAt: TimestampSchema,
  }),
});
