import { z } from 'zod';
import { EntityIdSchema, FaultKindSchema, GpuClassSchema, MinorUnitsSchema } from '../primitives';
import { IsolationLevelSchema } from '../providers/isolation.schemas';
import { BasisPointsSchema } from './settlement.schemas';

/** How a subnet prices GPU time, per GPU-hour in minor units. */
export const SubnetPricingSchema = z.discriminatedUnion('mode', [
  z.strictObject({
    /** A fixed price per GPU class. */
    mode: z.literal('fixed'),
    pricePerGpuHour: z.record(GpuClassSchema, MinorUnitsSchema),
  }),
  z.strictObject({
    /**
     * A sealed-bid auction per job (ADR 0071): each candidate GPU bids its provider's price floor
     * (the reserve when it names none); bids below the reserve or above the job's max price are
     * not offered; the job clears at the highest bid among the GPUs placed (uniform price), which
     * is what every provider of the job is paid.
     */
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
 * Simulated GPUs and host-process edges are allowed only in a subnet whose asset settles no real
 * value.
 */
export const SubnetTrustSchema = z.strictObject({
  /** `allowed`: GPUs declared by simulated edges may be placed (demo and test subnets only). */
  simulatedGpus: z.enum(['allowed', 'refused']).default('refused'),
  /** `required`: only GPUs whose last challenge passed are placed. */
  verifiedGpus: z.enum(['required', 'optional']).default('required'),
  /** Challenges per GPU-hour on GPUs running the subnet's jobs (0: none). */
  spotChecksPerGpuHour: z.number().min(0).max(60).default(1),
  /**
   * The weakest isolation an edge may run the subnet's jobs with (ADR 0072). `host-process` is
   * allowed only in a subnet whose asset settles no real value.
   */
  minimumIsolation: IsolationLevelSchema.default('container'),
});
export type SubnetTrust = z.infer<typeof SubnetTrustSchema>;

/** The trust rules of a subnet that names none. */
export const DEFAULT_SUBNET_TRUST: SubnetTrust = {
  simulatedGpus: 'refused',
  verifiedGpus: 'required',
  spotChecksPerGpuHour: 1,
  minimumIsolation: 'container',
};

const DAY = 24 * 3600;

/**
 * Who changes a subnet's rules (ADR 0071). `owner`: its owner alone, at once (a private subnet);
 * the owner also decides appeals against slashes. `stake-vote`: any member proposes, members vote
 * with their stake (owner, providers and delegators), and a change that passes takes effect
 * `delaySeconds` after the vote closes.
 */
export const SubnetGovernanceSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('owner') }),
  z.strictObject({
    mode: z.literal('stake-vote'),
    /** Votes cast (yes + no + abstain), as a share of the stake that could vote when it opened. */
    quorumBps: z.int().min(1).max(10_000),
    /** Yes as a share of yes + no for a proposal to pass (more than half at least). */
    thresholdBps: z.int().min(5_001).max(10_000),
    /** How long a proposal is open for votes. */
    votingSeconds: z
      .int()
      .min(1)
      .max(30 * DAY),
    /** Between a proposal passing and its change taking effect. */
    delaySeconds: z
      .int()
      .min(0)
      .max(30 * DAY),
  }),
]);
export type SubnetGovernance = z.infer<typeof SubnetGovernanceSchema>;

/** Where slashed stake goes. `refund-tenant`: to the tenant of the job the fault harmed (else treasury). */
export const SlashDestinationSchema = z.enum(['burn', 'treasury', 'refund-tenant']);

/** How a subnet carries out a slash (the amounts are the `slashing` table's). */
export const SlashingPolicySchema = z.strictObject({
  /** A slash is held (not yet taken) this long; the provider may appeal meanwhile. 0: taken at once. */
  appealSeconds: z
    .int()
    .min(0)
    .max(30 * DAY)
    .default(0),
  destination: SlashDestinationSchema.default('treasury'),
  /** A slashed provider is not offered to the subnet's jobs for this long after the evidence. */
  jailSeconds: z
    .int()
    .min(0)
    .max(365 * DAY)
    .default(0),
});
export type SlashingPolicy = z.infer<typeof SlashingPolicySchema>;

export const DEFAULT_SLASHING_POLICY: SlashingPolicy = {
  appealSeconds: 0,
  destination: 'treasury',
  jailSeconds: 0,
};

/**
 * A subnet's rules, set by its owner or by its members' vote (`governance`). Versioned: an update applies to jobs submitted after it; a
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
  /** How a slash is carried out: appeal window, where the stake goes, jail. */
  slashingPolicy: SlashingPolicySchema.default(DEFAULT_SLASHING_POLICY),
  /** Who changes these parameters. Default: the owner alone. */
  governance: SubnetGovernanceSchema.default({ mode: 'owner' }),
});
export type SubnetParametersInput = z.input<typeof SubnetParametersSchema>;
