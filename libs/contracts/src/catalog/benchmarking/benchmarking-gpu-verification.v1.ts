import { z } from 'zod';
import { defineQuery } from '../../query';
import { EdgeIdSchema } from '../primitives';
import { GpuVerificationStatusSchema } from './challenge.schemas';

export const ProviderGpuVerificationSchema = z.strictObject({
  providerId: EdgeIdSchema,
  /** Benchmarking holds the provider's edge as simulated: its GPUs are never challenged. */
  simulated: z.boolean(),
  gpus: z
    .array(z.strictObject({ uuid: z.string().min(1).max(128), status: GpuVerificationStatusSchema }))
    .max(64),
});
export type ProviderGpuVerification = z.infer<typeof ProviderGpuVerificationSchema>;

/**
 * The verification status of each GPU of a page of providers, in one ask: what a provider listing
 * shows beside each GPU. The full record (since when, the challenge behind it, the evidence) is
 * `benchmarking.provider-trust`'s, one provider at a time.
 */
export const FindGpuVerification = defineQuery({
  name: 'benchmarking.gpu-verification',
  version: 1,
  description: "Each GPU's verification status for the given providers (at most 1000), in one ask.",
  /** As `providerPageRequest`'s `providerIds`, but required: the listing asks for the page it shows. */
  request: z.strictObject({ providerIds: z.array(EdgeIdSchema).min(1).max(1000) }),
  /** Ordered by provider id; a provider benchmarking has never seen is left out. */
  response: z.strictObject({ items: z.array(ProviderGpuVerificationSchema).max(1000) }),
});
