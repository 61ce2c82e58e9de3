import { z } from 'zod';
import { defineEvent } from '../../message';
import {
  AssetSchema,
  EntityIdSchema,
  FaultKindSchema,
  GpuClassSchema,
  MinorUnitsSchema,
  TimestampSchema,
} from '../primitives';
import { SettlementStream } from '../streams';
import { BasisPointsSchema } from './settlement.schemas';
import {
  DEFAULT_SLASHING_POLICY,
  DEFAULT_SUBNET_TRUST,
  SlashingPolicySchema,
  SubnetPricingSchema,
  SubnetTrustSchema,
} from './subnet-parameters.schemas';

/**
 * The terms a funded job is billed under: its subnet's parameters at the version it was funded
 * under, narrowed to the GPU classes it may run on, and the platform's fee at that time.
 */
export const JobTermsSchema = z.strictObject({
  pricing: SubnetPricingSchema,
  maxPricePerGpuHour: MinorUnitsSchema,
  billingIncrementSeconds: z.int().min(1),
  minimumChargeSeconds: z.int().min(0),
  subnetFeeBps: BasisPointsSchema,
  platformFeeBps: BasisPointsSchema,
  /** `escrow.low` is raised when the unaccrued escrow falls below this share of it. */
  lowEscrowBps: BasisPointsSchema,
  slashing: z.partialRecord(FaultKindSchema, BasisPointsSchema),
  /** Whose GPUs the job may be placed on and how often they are spot-checked. */
  trust: SubnetTrustSchema.default(DEFAULT_SUBNET_TRUST),
  /** How a slash for a fault in this job is carried out (appeal window, destination, jail). */
  slashingPolicy: SlashingPolicySchema.default(DEFAULT_SLASHING_POLICY),
});

export const JobFunded = defineEvent({
  type: 'job.funded',
  version: 1,
  subject: 'settlement.job.funded.v1',
  stream: SettlementStream.name,
  description: "The job's budget is held in escrow; it may be scheduled.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    subnetId: EntityIdSchema,
    /** The subnet parameters version the job is billed under. */
    subnetVersion: z.int().min(1),
    asset: AssetSchema,
    gpus: z.int().min(1),
    /** GPU classes the job may be placed on (accepted by the job and allowed by the subnet). */
    gpuClasses: z.array(GpuClassSchema).min(1),
    maxDurationSeconds: z.int().min(1),
    /** Total held: `maxCharge + subnetFee + platformFee`. */
    escrow: MinorUnitsSchema,
    /** Providers' charge at the maximum price for the maximum billable time. */
    maxCharge: MinorUnitsSchema,
    subnetFee: MinorUnitsSchema,
    platformFee: MinorUnitsSchema,
    terms: JobTermsSchema,
    fundedAt: TimestampSchema,
  }),
});
