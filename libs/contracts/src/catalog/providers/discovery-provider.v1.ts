import { z } from 'zod';
import { defineQuery } from '../../query';
import { EdgeIdSchema } from '../primitives';
import { CandidateGpuSchema, CandidateProviderSchema } from './discovery-candidates.v1';

/** A provider as discovery knows it: every GPU, offered or not, and whether it is online. */
export const ProviderViewSchema = CandidateProviderSchema.omit({ gpus: true }).extend({
  status: z.enum(['online', 'offline']),
  /** What the edge said its `isolation` rests on, or that it reported none (ADR 0072). */
  isolationDetail: z.string(),
  gpus: z.array(
    CandidateGpuSchema.extend({
      /** Offered now: the provider is online and the GPU is shared, whole and unreserved. */
      available: z.boolean(),
    }),
  ),
});
export type ProviderView = z.infer<typeof ProviderViewSchema>;

export const GetProvider = defineQuery({
  name: 'discovery.provider',
  version: 1,
  description: 'One provider as discovery knows it, online or offline, with all its GPUs.',
  request: z.strictObject({ providerId: EdgeIdSchema }),
  /** `null`: no such provider, or it deregistered. */
  response: z.strictObject({ provider: ProviderViewSchema.nullable() }),
});
