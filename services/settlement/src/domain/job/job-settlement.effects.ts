import { escrowOf, payableOf, platformFeesOf, treasuryOf, walletOf } from '../accounts';
import type { Transfer, TransferCode } from '../ledger/transfer';
import { minOf, minor } from '../money';
import {
  type FundedJob,
  type JobSettlementEvent,
  type JobSettlementState,
  type Leg,
  meteredLegs,
} from './job-settlement.decider';

/*
 * The ledger transfers each job event stands for, given the job's state before it. Pure and
 * deterministic (ids from the job, provider, report and leg), so replaying the stream rebuilds the
 * same ledger and a redelivered message finds its transfers already there.
 */

const LEG_CODE: Record<Leg, TransferCode> = {
  charge: 'usage-charge',
  'subnet-fee': 'fee-subnet',
  'platform-fee': 'fee-platform',
};

export const rewardShareId = (jobId: string, providerId: string, delegatorId: string): string =>
  `reward-share:${jobId}:${providerId}:${delegatorId}`;

const legAccount = (job: FundedJob, leg: Leg, providerId: string): string =>
  leg === 'charge'
    ? payableOf(job.asset, providerId)
    : leg === 'subnet-fee'
      ? treasuryOf(job.asset, job.subnetId, job.jobId)
      : platformFeesOf(job.asset, job.jobId);

export const jobTransfers = (state: JobSettlementState, event: JobSettlementEvent): Transfer[] => {
  switch (event.type) {
    case 'job.funded': {
      const d = event.data;
      const amount = minor(d.escrow);
      if (amount === 0n) return [];
      return [
        {
          id: `escrow-fund:${d.jobId}`,
          debitAccountId: walletOf(d.asset, d.tenantId),
          creditAccountId: escrowOf(d.asset, d.jobId),
          amount,
          kind: 'posted',
          pendingId: null,
          code: 'escrow-fund',
          jobId: d.jobId,
          at: d.fundedAt,
        },
      ];
    }
    case 'usage.metered': {
      if (state.status !== 'funded') return [];
      const d = event.data;
      return d.providers.flatMap((p) =>
        meteredLegs(d.jobId, d.seq, state.providers.get(p.providerId), p).map((leg): Transfer => ({
          id: leg.id,
          debitAccountId: escrowOf(state.asset, d.jobId),
          creditAccountId: legAccount(state, leg.leg, p.providerId),
          amount: leg.amount,
          kind: 'pending',
          pendingId: null,
          code: LEG_CODE[leg.leg],
          jobId: d.jobId,
          at: d.meteredAt,
        })),
      );
    }
    case 'job.settled': {
      if (state.status !== 'funded') return [];
      const d = event.data;
      const transfers: Transfer[] = [];
      for (const paid of d.providers) {
        const position = state.providers.get(paid.providerId);
        if (!position) continue;
        // Post each leg's pending transfers in accrual order up to what is owed; void the rest.
        const owed: Record<Leg, bigint> = {
          charge: minor(paid.paid),
          'subnet-fee': minor(paid.subnetFee),
          'platform-fee': minor(paid.platformFee),
        };
        for (const pending of position.pendings) {
          const post = minOf(owed[pending.leg], pending.amount);
          owed[pending.leg] -= post;
          const common = {
            debitAccountId: escrowOf(state.asset, d.jobId),
            creditAccountId: legAccount(state, pending.leg, paid.providerId),
            pendingId: pending.id,
            code: LEG_CODE[pending.leg],
            jobId: d.jobId,
            at: d.settledAt,
          };
          transfers.push(
            post > 0n
              ? { ...common, id: `post:${pending.id}`, amount: post, kind: 'post-pending' }
              : { ...common, id: `void:${pending.id}`, amount: pending.amount, kind: 'void-pending' },
          );
        }
      }
      // After the posts that credit the providers' payables (a batch is judged by its net anyway).
      for (const share of d.delegatorShares ?? []) {
        transfers.push({
          id: rewardShareId(d.jobId, share.providerId, share.delegatorId),
          debitAccountId: payableOf(state.asset, share.providerId),
          creditAccountId: payableOf(state.asset, share.delegatorId),
          amount: minor(share.amount),
          kind: 'posted',
          pendingId: null,
          code: 'reward-share',
          jobId: d.jobId,
          at: d.settledAt,
        });
      }
      const refund = minor(d.refunded);
      if (refund > 0n) {
        transfers.push({
          id: `refund:${d.jobId}`,
          debitAccountId: escrowOf(state.asset, d.jobId),
          creditAccountId: walletOf(state.asset, state.tenantId),
          amount: refund,
          kind: 'posted',
          pendingId: null,
          code: 'refund',
          jobId: d.jobId,
          at: d.settledAt,
        });
      }
      return transfers;
    }
    case 'escrow.rejected':
    case 'escrow.low':
    case 'escrow.exhausted':
      return [];
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};
