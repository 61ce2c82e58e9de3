import { z } from 'zod';
import { EntityIdSchema, GpuClassSchema, MinorUnitsSchema } from '../primitives';

/**
 * What one provider's GPUs did for one job. `gpuSeconds` is **cumulative** since the job started —
 * like a meter reading, not an increment — so a report can be lost, repeated or reordered without
 * changing the bill: settlement charges the highest reading it has seen.
 */
export const ProviderUsageSchema = z.strictObject({
  providerId: EntityIdSchema,
  gpuClass: GpuClassSchema,
  /** GPUs of this provider in the job's gang. */
  gpus: z.int().min(1).max(4096),
  /** GPU-seconds used so far (GPUs × wall seconds), cumulative since the job started. */
  gpuSeconds: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  /**
   * Price per GPU-hour agreed at placement, for subnets that price by auction (at least their
   * reserve price); absent where the subnet's fixed price table applies.
   */
  agreedPricePerGpuHour: MinorUnitsSchema.optional(),
});

/** Final readings, the same shape as a report's; an empty list means no rank ever ran. */
export const FinalUsageSchema = z.array(ProviderUsageSchema).max(4096).default([]);
