import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';
import { BasisPointsSchema } from './settlement.schemas';

export const EscrowLow = defineEvent({
  type: 'escrow.low',
  version: 1,
  subject: 'settlement.escrow.low.v1',
  stream: SettlementStream.name,
  description: "A job's escrow fell below its low-water mark (raised once per job).",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    asset: AssetSchema,
    funded: MinorUnitsSchema,
    remaining: MinorUnitsSchema,
    thresholdBps: BasisPointsSchema,
    raisedAt: TimestampSchema,
  }),
});
