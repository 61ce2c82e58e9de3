import type {
  MemberStanding,
  PayloadOf,
  ProposalChange,
  SlashEvidence,
  SubnetGovernance,
  SubnetProposalDecided,
  SubnetSlashProposed,
} from '@gpunet/contracts';
import type { z } from 'zod';
import type { FaultKindSchema, VoteChoiceSchema } from '@gpunet/contracts';
import type { SubnetParameters } from '../job/job-settlement.decider';

/* What a subnet's stream folds into: members, delegations, slashes and proposals (ADR 0071). */

export type FaultKind = z.output<typeof FaultKindSchema>;
export type VoteChoice = z.output<typeof VoteChoiceSchema>;
export type StakeVoteRules = Extract<SubnetGovernance, { mode: 'stake-vote' }>;

export interface Member {
  readonly providerId: string;
  /** Own stake, posted (what taken slashes left). */
  readonly stake: bigint;
  /** Of it, held by slashes not yet taken or overturned. */
  readonly held: bigint;
  readonly status: 'active' | 'unbonding' | 'released';
  readonly unbondsAt: string | null;
  /** Times joined: numbers the stake transfers, so leaving and rejoining never reuses an id. */
  readonly joins: number;
  readonly slashed: bigint;
  /** The latest jail of a slash not overturned (null: never jailed). */
  readonly jailedUntil: string | null;
  /** The standing last announced (`subnet.member-standing-changed`); null before the first. */
  readonly standing: MemberStanding | null;
}

export interface Delegation {
  readonly delegatorId: string;
  readonly providerId: string;
  /** Posted (what taken slashes left). */
  readonly amount: bigint;
  readonly held: bigint;
  readonly status: 'active' | 'unbonding' | 'released';
  readonly unbondsAt: string | null;
  readonly slashed: bigint;
  /** Delegations and releases so far: number the transfers, so none reuses an id. */
  readonly locks: number;
  readonly releases: number;
}

export interface Slash {
  readonly slashId: string;
  readonly providerId: string;
  readonly evidence: SlashEvidence;
  readonly amount: bigint;
  readonly shares: PayloadOf<typeof SubnetSlashProposed>['shares'];
  readonly destination: PayloadOf<typeof SubnetSlashProposed>['destination'];
  readonly beneficiaryId: string | null;
  readonly status: 'held' | 'taken' | 'overturned';
  readonly appealUntil: string;
  readonly jailedUntil: string;
  readonly proposedAt: string;
  readonly appealProposalId: string | null;
}

export interface Vote {
  readonly choice: VoteChoice;
  readonly weight: bigint;
}

export interface Proposal {
  readonly proposalId: string;
  readonly proposerId: string;
  readonly title: string;
  readonly change: ProposalChange;
  readonly electorate: bigint;
  readonly decidedBy: 'stake-vote' | 'owner';
  /** The quorum and threshold when it opened (null: decided by the owner). */
  readonly rules: StakeVoteRules | null;
  readonly votingEndsAt: string;
  readonly openedAt: string;
  readonly votes: ReadonlyMap<string, Vote>;
  readonly status: 'open' | 'passed' | 'rejected' | 'applied';
  readonly decision: PayloadOf<typeof SubnetProposalDecided> | null;
  readonly appliedVersion: number | null;
}

export type SubnetState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly subnetId: string;
      readonly ownerId: string;
      readonly asset: string;
      readonly ownerStake: bigint;
      readonly version: number;
      readonly parameters: SubnetParameters;
      readonly members: ReadonlyMap<string, Member>;
      /** By `<delegator>/<provider>`. */
      readonly delegations: ReadonlyMap<string, Delegation>;
      /** By slash id, in the order proposed. */
      readonly slashes: ReadonlyMap<string, Slash>;
      /** By proposal id, in the order opened. */
      readonly proposals: ReadonlyMap<string, Proposal>;
    };

export const delegationKey = (delegatorId: string, providerId: string): string =>
  `${delegatorId}/${providerId}`;
