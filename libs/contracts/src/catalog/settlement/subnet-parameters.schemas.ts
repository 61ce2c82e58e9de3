import { z } from 'zod';
import { EntityIdSchema, FaultKindSchema, GpuClassSchema, MinorUnitsSchema } from '../primitives';
import { BasisPointsSchema } from './settlement.schemas';

/** How a subnet prices GPU time, per GPU-hour in minor units. */
export const SubnetPricingSchema = z.discriminatedUnion('mode', [
  z.strictObject({
    /** A fixed price per GPU class. */
    mode: z.literal('fixed'),
    pricePerGpuHour: z.record(GpuClassSchema, MinorUnitsSchema),
  }),
  z.strictObject({
    /** Providers bid; a bid below the reserve price is refused, the agreed price comes with the usage. */
    mode: z.literal('auction'),
    reservePricePerGpuHour: z.record(GpuClassSchema, MinorUnitsSchema),
  }),
]);

/** Who may join a subnet as a provider. */
export const SubnetMembershipSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('open') }),
  z.strictObject({ mode: z.literal('allowlist'), providers: z.array(EntityIdSchema).max(10_000) }),
]);

/**
 * Whose GPUs a subnet's jobs may run on, and how often running GPUs are spot-checked (ADR 0070).
 * Simulated GPUs are allowed only in a subnet whose asset settles no real value.
 */
export const SubnetTrustSchema = z.strictObject({
  /** `allowed`: GPUs declared by simulated edges may be placed (demo and test subnets only). */
  simulatedGpus: z.enum(['allowed', 'refused']).default('refused'),
  /** `required`: only GPUs whose last challenge passed are placed. */
  verifiedGpus: z.enum(['required', 'optional']).default('required'),
  /** Challenges per GPU-hour on GPUs running the subnet's jobs (0: none). */
  spotChecksPerGpuHour: z.number().min(0).max(60).default(1),
});
export type SubnetTrust = z.infer<typeof SubnetTrustSchema>;

/** The trust rules of a subnet that names none. */
export const DEFAULT_SUBNET_TRUST: SubnetTrust = {
  simulatedGpus: 'refused',
  verifiedGpus: 'required',
  spotChecksPerGpuHour: 1,
};

/**
 * A subnet's rules, set by its owner. Versioned: an update applies to jobs submitted after it; a
 * job keeps the version it was funded under.
 */
export const SubnetParametersSchema = z.strictObject({
  /** GPU classes the subnet runs jobs on. */
  gpuClasses: z.array(GpuClassSchema).min(1).max(64),
  pricing: SubnetPricingSchema,
  /** Usage is billed in whole multiples of this many seconds per GPU (rounded up). */
  billingIncrementSeconds: z.int().min(1).max(3600),
  /** Each provider of a job is billed at least this many seconds per GPU. */
  minimumChargeSeconds: z.int().min(0).max(86_400),
  /** The subnet's fee on top of the providers' charge, in basis points; goes to its treasury. */
  subnetFeeBps: z.int().min(0).max(5_000),
  /** Stake a provider locks to join. */
  providerMinStake: MinorUnitsSchema,
  /** Share of a provider's stake slashed per verified fault kind, in basis points (absent = 0). */
  slashing: z.partialRecord(FaultKindSchema, BasisPointsSchema),
  /** Time between a provider leaving and its stake being released (still slashable meanwhile). */
  unbondingSeconds: z
    .int()
    .min(0)
    .max(90 * 24 * 3600),
  membership: SubnetMembershipSchema,
  trust: SubnetTrustSchema.default(DEFAULT_SUBNET_TRUST),
});
