import type { SubnetState } from './subnet.decider';
import { delegationsTo } from './subnet-rules';

/*
 * What other aggregates' decisions read of a subnet's state (the job settlement reads it when it
 * bills and pays). Pure functions of the state.
 */

/** Whether usage by `providerId` in a job of this subnet is billed: a member, active or unbonding. */
export const isBillableMember = (state: SubnetState, providerId: string): boolean => {
  if (!state.exists) return false;
  const member = state.members.get(providerId);
  return member !== undefined && member.status !== 'released';
};

/** A provider's own stake and each delegation to it (active or unbonding), for pro rata shares. */
export interface ProviderStakes {
  readonly own: bigint;
  readonly delegations: readonly { readonly delegatorId: string; readonly amount: bigint }[];
}

/** Posted stake (held slashes not deducted), delegations by delegator id; none for a non-member. */
export const stakesOf = (state: SubnetState, providerId: string): ProviderStakes => {
  if (!state.exists) return { own: 0n, delegations: [] };
  const member = state.members.get(providerId);
  return {
    own: member?.stake ?? 0n,
    delegations: delegationsTo(state, providerId)
      .filter((d) => d.amount > 0n)
      .map((d) => ({ delegatorId: d.delegatorId, amount: d.amount })),
  };
};
