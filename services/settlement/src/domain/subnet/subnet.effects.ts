import type { PayloadOf, SubnetSlashProposed } from '@gpunet/contracts';
import { burnOf, delegationOf, stakeOf, treasuryOf, walletOf } from '../accounts';
import type { Transfer } from '../ledger/transfer';
import { minor } from '../money';
import type { Slash, SubnetEvent, SubnetState } from './subnet.decider';
import { delegationKey } from './subnet-state';

type Share = PayloadOf<typeof SubnetSlashProposed>['shares'][number];

const transfer = (
  id: string,
  debitAccountId: string,
  creditAccountId: string,
  amount: bigint,
  code: Transfer['code'],
  at: string,
  jobId: string | null = null,
): Transfer[] =>
  amount > 0n
    ? [{ id, debitAccountId, creditAccountId, amount, kind: 'posted', pendingId: null, code, jobId, at }]
    : [];

/** Where a slash's stake goes: the subnet's treasury (the job's stripe), its burn account, or the harmed tenant. */
const destinationOf = (
  asset: string,
  subnetId: string,
  slash: Pick<Slash, 'destination' | 'beneficiaryId' | 'evidence' | 'slashId'>,
): string => {
  if (slash.destination === 'burn') return burnOf(asset, subnetId);
  if (slash.destination === 'refund-tenant' && slash.beneficiaryId !== null)
    return walletOf(asset, slash.beneficiaryId);
  return treasuryOf(asset, subnetId, slash.evidence.jobId ?? slash.slashId);
};

const stakeAccountOf = (asset: string, subnetId: string, providerId: string, share: Share): string =>
  share.role === 'provider'
    ? stakeOf(asset, providerId, subnetId)
    : delegationOf(asset, share.stakerId, subnetId, providerId);

/** A share's hold: `slash:<slash>:provider` or `slash:<slash>:d-<delegator>`. */
const holdIdOf = (slashId: string, share: Share): string =>
  `slash:${slashId}:${share.role === 'provider' ? 'provider' : `d-${share.stakerId}`}`;

/** The ledger transfers each subnet event stands for, given the subnet's state before it. */
export const subnetTransfers = (state: SubnetState, event: SubnetEvent): Transfer[] => {
  switch (event.type) {
    case 'subnet.created': {
      const d = event.data;
      return transfer(
        `stake-lock:${d.subnetId}:${d.ownerId}:owner`,
        walletOf(d.asset, d.ownerId),
        stakeOf(d.asset, d.ownerId, d.subnetId),
        minor(d.stake),
        'stake-lock',
        d.createdAt,
      );
    }
    case 'subnet.provider-joined': {
      if (!state.exists) return [];
      const d = event.data;
      const joins = (state.members.get(d.providerId)?.joins ?? 0) + 1;
      return transfer(
        `stake-lock:${d.subnetId}:${d.providerId}:${joins}`,
        walletOf(state.asset, d.providerId),
        stakeOf(state.asset, d.providerId, d.subnetId),
        minor(d.stake),
        'stake-lock',
        d.joinedAt,
      );
    }
    case 'subnet.stake-released': {
      if (!state.exists) return [];
      const d = event.data;
      const joins = state.members.get(d.providerId)?.joins ?? 0;
      return transfer(
        `stake-release:${d.subnetId}:${d.providerId}:${joins}`,
        stakeOf(state.asset, d.providerId, d.subnetId),
        walletOf(state.asset, d.providerId),
        minor(d.amount),
        'stake-release',
        d.releasedAt,
      );
    }
    case 'subnet.delegated': {
      if (!state.exists) return [];
      const d = event.data;
      const locks = (state.delegations.get(delegationKey(d.delegatorId, d.providerId))?.locks ?? 0) + 1;
      return transfer(
        `delegate:${d.subnetId}:${d.delegatorId}:${d.providerId}:${locks}`,
        walletOf(state.asset, d.delegatorId),
        delegationOf(state.asset, d.delegatorId, d.subnetId, d.providerId),
        minor(d.amount),
        'stake-lock',
        d.delegatedAt,
      );
    }
    case 'subnet.delegation-released': {
      if (!state.exists) return [];
      const d = event.data;
      const releases = (state.delegations.get(delegationKey(d.delegatorId, d.providerId))?.releases ?? 0) + 1;
      return transfer(
        `delegate-release:${d.subnetId}:${d.delegatorId}:${d.providerId}:${releases}`,
        delegationOf(state.asset, d.delegatorId, d.subnetId, d.providerId),
        walletOf(state.asset, d.delegatorId),
        minor(d.amount),
        'stake-release',
        d.releasedAt,
      );
    }
    case 'subnet.slash-proposed': {
      // Held: pending on each stake, so neither unbonding nor another slash can spend it.
      if (!state.exists) return [];
      const d = event.data;
      const to = destinationOf(state.asset, d.subnetId, d);
      return d.shares.map((share) => ({
        id: holdIdOf(d.slashId, share),
        debitAccountId: stakeAccountOf(state.asset, d.subnetId, d.providerId, share),
        creditAccountId: to,
        amount: minor(share.amount),
        kind: 'pending',
        pendingId: null,
        code: 'slash',
        jobId: d.evidence.jobId,
        at: d.proposedAt,
      }));
    }
    case 'subnet.provider-slashed': {
      if (!state.exists) return [];
      const d = event.data;
      const slash = d.slashId === undefined ? undefined : state.slashes.get(d.slashId);
      if (!slash) return [];
      const to = destinationOf(state.asset, d.subnetId, slash);
      return slash.shares.map((share) => ({
        id: `${holdIdOf(slash.slashId, share)}:taken`,
        debitAccountId: stakeAccountOf(state.asset, d.subnetId, d.providerId, share),
        creditAccountId: to,
        amount: minor(share.amount),
        kind: 'post-pending',
        pendingId: holdIdOf(slash.slashId, share),
        code: 'slash',
        jobId: slash.evidence.jobId,
        at: d.slashedAt,
      }));
    }
    case 'subnet.slash-overturned': {
      if (!state.exists) return [];
      const d = event.data;
      const slash = state.slashes.get(d.slashId);
      if (!slash) return [];
      const to = destinationOf(state.asset, d.subnetId, slash);
      return slash.shares.map((share) => ({
        id: `${holdIdOf(slash.slashId, share)}:overturned`,
        debitAccountId: stakeAccountOf(state.asset, d.subnetId, d.providerId, share),
        creditAccountId: to,
        amount: minor(share.amount),
        kind: 'void-pending',
        pendingId: holdIdOf(slash.slashId, share),
        code: 'slash',
        jobId: slash.evidence.jobId,
        at: d.overturnedAt,
      }));
    }
    case 'subnet.request-rejected':
    case 'subnet.parameters-updated':
    case 'subnet.provider-left':
    case 'subnet.member-standing-changed':
    case 'subnet.proposal-opened':
    case 'subnet.vote-cast':
    case 'subnet.proposal-decided':
    case 'subnet.undelegated':
      return [];
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};
