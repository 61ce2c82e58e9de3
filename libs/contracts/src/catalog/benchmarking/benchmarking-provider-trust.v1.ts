import { z } from 'zod';
import { defineQuery } from '../../query';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { RequestIdSchema } from './benchmarking.schemas';
import { challengeRecordFields, GpuVerificationStatusSchema } from './challenge.schemas';
import { ReliabilitySchema } from './reliability.schemas';

export const ProviderTrustSchema = z.strictObject({
  providerId: EdgeIdSchema,
  simulated: z.boolean(),
  reliability: ReliabilitySchema,
  gpus: z
    .array(
      z.strictObject({
        uuid: z.string().min(1).max(128),
        status: GpuVerificationStatusSchema,
        /** When the status last changed. */
        since: UtcTimestampSchema,
        /** The challenge behind the status (null: pending or simulated). */
        challengeId: RequestIdSchema.nullable(),
      }),
    )
    .max(64),
  /** The provider's latest challenges, newest first (at most 20). */
  challenges: z.array(z.strictObject(challengeRecordFields)).max(20),
});
export type ProviderTrust = z.infer<typeof ProviderTrustSchema>;

export const GetProviderTrust = defineQuery({
  name: 'benchmarking.provider-trust',
  version: 1,
  description:
    "One provider's trust: each GPU's verification status, its reliability and its latest challenges with their evidence.",
  request: z.strictObject({ providerId: EdgeIdSchema }),
  /** `null`: benchmarking has never seen the provider. */
  response: z.strictObject({ trust: ProviderTrustSchema.nullable() }),
});
