import { z } from 'zod';
import { defineQuery } from '../../query';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, text, TimestampSchema } from '../primitives';
import { MemberStandingSchema } from './subnet-member-standing-changed.v1';
import {
  ProposalIdSchema,
  SlashDestinationSchema,
  SlashEvidenceSchema,
  SlashIdSchema,
  SlashShareSchema,
} from './subnet-governance.schemas';
import { SubnetParametersSchema } from './subnet-parameters.schemas';
import { SubnetRequestRejected } from './subnet-request-rejected.v1';

/** A proposal as it stands: open, or decided with its tally. */
export const ProposalViewSchema = z.strictObject({
  proposalId: ProposalIdSchema,
  proposerId: EntityIdSchema,
  title: text(200),
  kind: z.enum(['parameters', 'overturn-slash']),
  /** For `overturn-slash`, the slash appealed. */
  slashId: SlashIdSchema.nullable(),
  decidedBy: z.enum(['stake-vote', 'owner']),
  status: z.enum(['open', 'passed', 'rejected', 'applied']),
  reason: z.enum(['threshold-met', 'quorum-not-met', 'threshold-not-met', 'superseded']).nullable(),
  yes: MinorUnitsSchema,
  no: MinorUnitsSchema,
  abstain: MinorUnitsSchema,
  electorate: MinorUnitsSchema,
  votingEndsAt: TimestampSchema,
  takesEffectAt: TimestampSchema.nullable(),
  /** The parameters version it produced, once applied. */
  appliedVersion: z.int().min(2).nullable(),
});

export const DelegationViewSchema = z.strictObject({
  delegatorId: EntityIdSchema,
  providerId: EntityIdSchema,
  amount: MinorUnitsSchema,
  status: z.enum(['active', 'unbonding', 'released']),
  unbondsAt: TimestampSchema.nullable(),
  slashed: MinorUnitsSchema,
  /** Rewards it received (its pro rata share of the provider's payouts). */
  rewards: MinorUnitsSchema,
});

export const SlashViewSchema = z.strictObject({
  slashId: SlashIdSchema,
  providerId: EntityIdSchema,
  evidence: SlashEvidenceSchema,
  amount: MinorUnitsSchema,
  shares: z.array(SlashShareSchema),
  destination: SlashDestinationSchema,
  beneficiaryId: EntityIdSchema.nullable(),
  status: z.enum(['held', 'taken', 'overturned']),
  appealUntil: TimestampSchema,
  jailedUntil: TimestampSchema,
  /** The appeal's proposal, if the provider appealed. */
  appealProposalId: ProposalIdSchema.nullable(),
});

/** Figures of a subnet's activity, for people and dashboards. */
export const SubnetHealthSchema = z.strictObject({
  /** Members with status `active`. */
  activeProviders: z.int().min(0),
  /** Of those, in good standing (placeable). */
  providersInGoodStanding: z.int().min(0),
  /** GPU-seconds billed in jobs settled in the subnet. */
  gpuSecondsSettled: z.int().min(0),
  /** Charged to tenants in settled jobs: paid to providers + subnet fees + platform fees. */
  volume: MinorUnitsSchema,
  /** Owner's + providers' + delegations' stake (active or unbonding). */
  totalStake: MinorUnitsSchema,
  delegatedStake: MinorUnitsSchema,
  /** Taken by slashes, by destination. */
  slashedToTreasury: MinorUnitsSchema,
  slashedBurned: MinorUnitsSchema,
  slashedRefunded: MinorUnitsSchema,
});

/** The last request on the subnet that settlement refused (`subnet.request-rejected`), with why. */
export const SubnetRejectionSchema = SubnetRequestRejected.schema.pick({
  request: true,
  requesterId: true,
  reason: true,
  message: true,
  rejectedAt: true,
});

export const SubnetEconomicsQuery = defineQuery({
  name: 'settlement.subnet-economics',
  version: 1,
  description: "A subnet's parameters, stake, treasury, members and settled volume.",
  request: z.strictObject({ subnetId: EntityIdSchema }),
  response: z.strictObject({
    subnetId: EntityIdSchema,
    exists: z.boolean(),
    ownerId: EntityIdSchema.nullable(),
    asset: AssetSchema.nullable(),
    version: z.int().min(0),
    parameters: SubnetParametersSchema.nullable(),
    ownerStake: MinorUnitsSchema,
    treasury: MinorUnitsSchema,
    providers: z.array(
      z.strictObject({
        providerId: EntityIdSchema,
        stake: MinorUnitsSchema,
        status: z.enum(['active', 'unbonding', 'released']),
        unbondsAt: TimestampSchema.nullable(),
        slashed: MinorUnitsSchema,
        standing: MemberStandingSchema.optional(),
        jailedUntil: TimestampSchema.nullable().optional(),
        /** Delegated to it (active or unbonding). */
        delegated: MinorUnitsSchema.optional(),
      }),
    ),
    totalProviderStake: MinorUnitsSchema,
    jobsSettled: z.int().min(0),
    paidToProviders: MinorUnitsSchema,
    subnetFees: MinorUnitsSchema,
    /**
     * The last refused request (a creation refused leaves `exists: false` and says why here); null
     * when none. The gateway shows it to its requester only.
     */
    lastRejection: SubnetRejectionSchema.nullable().optional(),
    /** Newest first, at most 50. */
    proposals: z.array(ProposalViewSchema).optional(),
    delegations: z.array(DelegationViewSchema).optional(),
    /** Newest first, at most 50. */
    slashes: z.array(SlashViewSchema).optional(),
    health: SubnetHealthSchema.optional(),
  }),
});
