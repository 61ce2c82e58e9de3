import { z } from 'zod';
import { EntityIdSchema, FaultKindSchema } from '../primitives';

/**
 * A provider's fault during a job. Usage beyond `billableGpuSeconds` (the work lost to the fault:
 * since the fault, or since the last checkpoint it invalidated) is never paid.
 */
export const ProviderFaultSchema = z.strictObject({
  providerId: EntityIdSchema,
  kind: FaultKindSchema,
  /** GPU-seconds of this provider's (cumulative) usage that are still paid. */
  billableGpuSeconds: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** Whether the fault was verified (only verified faults are slashed). */
  verified: z.boolean(),
  detail: z.string().max(1024).optional(),
});
