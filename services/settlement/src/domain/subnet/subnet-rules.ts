import type { MemberStanding, SlashShare } from '@gpunet/contracts';
import { bpsOf, minor, minOf, toWire } from '../money';
import type { Delegation, Member, SubnetState } from './subnet-state';

/*
 * The arithmetic of a subnet's rules (ADR 0071), pure: a member's standing, voting weight and the
 * electorate, and how a slash is split over a provider's own stake and its delegations.
 */

type Existing = Extract<SubnetState, { exists: true }>;

const later = (at: string | null, than: string): boolean => at !== null && Date.parse(at) > Date.parse(than);

/**
 * `good`: active, own stake at least the current minimum, not jailed. An unbonding or released
 * member is that whatever else holds; a jail outranks a low stake (both keep it off placement).
 */
export const standingOf = (state: Existing, m: Member, at: string): MemberStanding => {
  if (m.status === 'released') return 'released';
  if (m.status === 'unbonding') return 'unbonding';
  if (later(m.jailedUntil, at)) return 'jailed';
  if (m.stake < minor(state.parameters.providerMinStake)) return 'below-minimum-stake';
  return 'good';
};

/** Delegations to `providerId` that still carry stake (active or unbonding), by delegator. */
export const delegationsTo = (state: Existing, providerId: string): Delegation[] =>
  [...state.delegations.values()]
    .filter((d) => d.providerId === providerId && d.status !== 'released')
    .sort((a, b) => (a.delegatorId < b.delegatorId ? -1 : 1));

/**
 * What `voterId` votes with now: the owner's stake if it is the owner, its own stake if it is an
 * active provider, and what it delegates (active delegations). Leaving stake does not vote.
 */
export const votingWeightOf = (state: Existing, voterId: string): bigint => {
  let weight = voterId === state.ownerId ? state.ownerStake : 0n;
  const member = state.members.get(voterId);
  if (member?.status === 'active') weight += member.stake;
  for (const d of state.delegations.values())
    if (d.delegatorId === voterId && d.status === 'active') weight += d.amount;
  return weight;
};

/** All the stake that could vote now: the quorum's base. */
export const electorateOf = (state: Existing): bigint => {
  let total = state.ownerStake;
  for (const m of state.members.values()) if (m.status === 'active') total += m.stake;
  for (const d of state.delegations.values()) if (d.status === 'active') total += d.amount;
  return total;
};

/**
 * `bps` of what is not already held of the provider's own stake and each delegation to it, split
 * pro rata: each delegator's share rounded down, the remainder on the provider's own share, which
 * is capped at its own free stake (what the cap cuts is not slashed). Never above any stake.
 * Zero shares are left out.
 */
export const slashSharesOf = (
  state: Existing,
  providerId: string,
  bps: number,
): { amount: bigint; shares: SlashShare[] } => {
  const member = state.members.get(providerId);
  const own = member ? member.stake - member.held : 0n;
  const delegations = delegationsTo(state, providerId).map((d) => ({ d, free: d.amount - d.held }));
  const total = delegations.reduce((s, x) => s + x.free, own);
  if (total <= 0n) return { amount: 0n, shares: [] };
  const wanted = bpsOf(total, bps);
  const delegated = delegations.map(({ d, free }) => ({
    stakerId: d.delegatorId,
    role: 'delegator' as const,
    amount: (wanted * free) / total,
  }));
  const ownShare = minOf(own, wanted - delegated.reduce((s, x) => s + x.amount, 0n));
  const shares = [{ stakerId: providerId, role: 'provider' as const, amount: ownShare }, ...delegated]
    .filter((s) => s.amount > 0n)
    .map((s) => ({ ...s, amount: toWire(s.amount) }));
  return { amount: shares.reduce((s, x) => s + minor(x.amount), 0n), shares };
};
