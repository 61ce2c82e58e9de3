import { z } from 'zod';
import { defineQuery } from '../../query';
import { EdgeIdSchema } from '../primitives';
import { BenchmarkProfileSchema } from './benchmark-profile.schemas';
import { providerPageRequest } from './benchmarking.schemas';
import { ReliabilitySchema } from './reliability.schemas';

export const ProviderProfileSchema = z.strictObject({
  providerId: EdgeIdSchema,
  simulated: z.boolean(),
  /** The newest profile; null when the provider was never measured. */
  profile: BenchmarkProfileSchema.nullable(),
  /** `expiresAt` has passed: the figures are stale (the scheduler should fall back to declared ones). */
  expired: z.boolean(),
  reliability: ReliabilitySchema,
});
export type ProviderProfile = z.infer<typeof ProviderProfileSchema>;

export const FindGpuProfiles = defineQuery({
  name: 'benchmarking.gpu-profiles',
  version: 1,
  description: 'Measured performance profiles and reliability per provider, paged by provider id.',
  request: z.strictObject({ ...providerPageRequest, includeExpired: z.boolean().default(false) }),
  response: z.strictObject({ items: z.array(ProviderProfileSchema), nextCursor: z.string().nullable() }),
});
