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
});
