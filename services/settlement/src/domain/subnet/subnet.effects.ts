import { stakeOf, treasuryOf, walletOf } from '../accounts';
import type { Transfer } from '../ledger/transfer';
import { minor } from '../money';
import type { SubnetEvent, SubnetState } from './subnet.decider';

/** The ledger transfers each subnet event stands for, given the subnet's state before it. */
export const subnetTransfers = (state: SubnetState, event: SubnetEvent): Transfer[] => {
  const posted = (
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
  switch (event.type) {
    case 'subnet.created': {
      const d = event.data;
      return posted(
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
      return posted(
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
      return posted(
        `stake-release:${d.subnetId}:${d.providerId}:${joins}`,
        stakeOf(state.asset, d.providerId, d.subnetId),
        walletOf(state.asset, d.providerId),
        minor(d.amount),
        'stake-release',
        d.releasedAt,
      );
    }
    case 'subnet.provider-slashed': {
      if (!state.exists) return [];
      const d = event.data;
      return posted(
        `slash:${d.subnetId}:${d.providerId}:${d.jobId}:${d.kind}`,
        stakeOf(state.asset, d.providerId, d.subnetId),
        treasuryOf(state.asset, d.subnetId, d.jobId ?? d.providerId),
        minor(d.amount),
        'slash',
        d.slashedAt,
        d.jobId,
      );
    }
    case 'subnet.request-rejected':
    case 'subnet.parameters-updated':
    case 'subnet.provider-left':
      return [];
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};
