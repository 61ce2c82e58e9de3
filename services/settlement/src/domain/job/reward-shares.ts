/*
 * How a provider's pay is shared with those who delegated stake to it: pro rata to stake, in exact
 * minor units. Pure; the job settlement decides with it and the tests check against it.
 */

/** A provider's own stake and each delegation to it, as the subnet holds them when the job settles. */
export interface StakeHolders {
  readonly own: bigint;
  readonly delegations: readonly { readonly delegatorId: string; readonly amount: bigint }[];
}

export interface RewardShare {
  readonly delegatorId: string;
  readonly amount: bigint;
}

export const NO_STAKE: StakeHolders = { own: 0n, delegations: [] };

/**
 * Each delegator's share of `paid`: ⌊paid × delegated ÷ (own + Σ delegated)⌋, in delegator id order,
 * zero shares left out; the remainder (the provider's own part and every rounding) stays with the
 * provider. A delegator's several delegations count as one; a provider's delegation to itself
 * counts as its own stake.
 */
export const rewardShares = (providerId: string, paid: bigint, stakes: StakeHolders): RewardShare[] => {
  let own = stakes.own;
  const delegated = new Map<string, bigint>();
  for (const { delegatorId, amount } of stakes.delegations) {
    if (amount <= 0n) continue;
    if (delegatorId === providerId) own += amount;
    else delegated.set(delegatorId, (delegated.get(delegatorId) ?? 0n) + amount);
  }
  const total = [...delegated.values()].reduce((sum, amount) => sum + amount, own);
  if (paid <= 0n || total <= 0n) return [];
  return [...delegated.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([delegatorId, amount]) => ({ delegatorId, amount: (paid * amount) / total }))
    .filter((share) => share.amount > 0n);
};
