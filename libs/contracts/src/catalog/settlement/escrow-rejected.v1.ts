import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

export const EscrowRejectionReasonSchema = z.enum([
  'insufficient-funds',
  'unknown-subnet',
  'subnet-closed',
  'asset-mismatch',
  'no-allowed-gpu-class',
  'price-below-subnet-price',
]);

export const EscrowRejected = defineEvent({
  type: 'escrow.rejected',
  version: 1,
  subject: 'settlement.escrow.rejected.v1',
  stream: SettlementStream.name,
  description: 'The job could not be funded; it is never scheduled.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    subnetId: EntityIdSchema,
    asset: AssetSchema,
    reason: EscrowRejectionReasonSchema,
    message: z.string().max(1024),
    /** The escrow the job needed, when it could be computed. */
    required: MinorUnitsSchema.nullable(),
    /** The tenant's available balance when the job was rejected for insufficient funds. */
    available: MinorUnitsSchema.nullable(),
    rejectedAt: TimestampSchema,
  }),
});
