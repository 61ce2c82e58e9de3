import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, GpuClassSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

/** One provider's metered position in a job: cumulative figures. */
export const MeteredProviderSchema = z.strictObject({
  providerId: EntityIdSchema,
  gpuClass: GpuClassSchema,
  gpus: z.int().min(1),
  /** The highest reading seen. */
  gpuSecondsReported: z.int().min(0),
  /** GPU-seconds billed: increments and minimum charge applied, capped by the budget. */
  gpuSecondsBilled: z.int().min(0),
  pricePerGpuHour: MinorUnitsSchema,
  /** Cumulative amounts accrued (pending until the job settles). */
  charge: MinorUnitsSchema,
  subnetFee: MinorUnitsSchema,
  platformFee: MinorUnitsSchema,
});

export const UsageMetered = defineEvent({
  type: 'usage.metered',
  version: 1,
  subject: 'settlement.usage.metered.v1',
  stream: SettlementStream.name,
  description: 'Usage was priced and accrued as pending transfers from the escrow (cumulative figures).',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** The report's sequence number; 0 for the final readings of a terminal event. */
    seq: z.int().min(0),
    /** Providers whose figures changed with this report. */
    providers: z.array(MeteredProviderSchema).min(1),
    /** Accrued across all providers and fees so far. */
    accrued: MinorUnitsSchema,
    /** Escrow not yet accrued. */
    remaining: MinorUnitsSchema,
    meteredAt: TimestampSchema,
    /**
     * Providers whose usage was not billed because they are not members of the job's subnet (never
     * joined, or released): nothing accrues to them and the tenant keeps the money.
     */
    notMembers: z.array(EntityIdSchema).optional(),
  }),
});
