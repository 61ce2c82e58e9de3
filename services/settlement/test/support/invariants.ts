import { foldEvents, type PayloadOf, type JobFailed, type SubnetProviderSlashed } from '@gpunet/contracts';
import { expect } from 'vitest';
import { escrowOf, payableOf, platformFeesOf, treasuryOf } from '../../src/domain/accounts';
import {
  type JobSettlementEvent,
  jobSettlementDecider,
  type JobSettlementState,
} from '../../src/domain/job/job-settlement.decider';
import { jobTransfers } from '../../src/domain/job/job-settlement.effects';
import { figuresFor } from '../../src/domain/job/pricing';
import { type Account, Ledger, type RecordedTransfer } from '../../src/domain/ledger/ledger';
import { ledgerHash } from '../../src/domain/ledger/ledger-hash';
import { type AccountBalances, type Transfer, ZERO_BALANCES } from '../../src/domain/ledger/transfer';
import { minor } from '../../src/domain/money';
import { totalsOf } from '../../src/domain/reconciliation';
import { type SubnetEvent, subnetDecider, type SubnetState } from '../../src/domain/subnet/subnet.decider';
import { delegationKey } from '../../src/domain/subnet/subnet-state';
import { isBillableMember, stakesOf } from '../../src/domain/subnet/subnet-views';
import { subnetTransfers } from '../../src/domain/subnet/subnet.effects';
import { depositDecider, depositTransfers, type DepositEvent } from '../../src/domain/wallet/deposit.decider';
import {
  withdrawalDecider,
  type WithdrawalEvent,
  withdrawalTransfers,
} from '../../src/domain/wallet/withdrawal.decider';
import type { LedgerView, SettlementView } from './deliveries';

/** Invariants 1, 2 and 5: every asset sums to zero, no forbidden negative balance, holds resolve once. */
export const checkLedger = ({
  accounts,
  transfers,
}: Pick<SettlementView, 'accounts' | 'transfers'>): void => {
  for (const asset of new Set(accounts.map((a) => a.asset))) {
    const totals = totalsOf(asset, accounts);
    expect(totals.posted, `${asset}: Σ posted`).toBe(0n);
    expect(totals.pending, `${asset}: Σ pending`).toBe(0n);
  }
  for (const a of accounts) {
    for (const v of [a.debitsPending, a.debitsPosted, a.creditsPending, a.creditsPosted])
      expect(v >= 0n).toBe(true);
    if (a.flags.debitsMustNotExceedCredits)
      expect(a.debitsPending + a.debitsPosted <= a.creditsPosted, `${a.id} overdrawn`).toBe(true);
    if (a.flags.creditsMustNotExceedDebits)
      expect(a.creditsPending + a.creditsPosted <= a.debitsPosted, `${a.id} credits > debits`).toBe(true);
  }
  const resolutions = new Map<string, RecordedTransfer[]>();
  const byId = new Map(transfers.map((t) => [t.id, t]));
  for (const t of transfers) {
    if (t.pendingId === null) continue;
    resolutions.set(t.pendingId, [...(resolutions.get(t.pendingId) ?? []), t]);
    const pending = byId.get(t.pendingId)!;
    expect(pending.kind).toBe('pending');
    expect(t.amount <= pending.amount).toBe(true);
  }
  for (const [pendingId, list] of resolutions) expect(list.length, `${pendingId} resolved`).toBe(1);
};

const jobIds = (view: SettlementView): string[] =>
  [...view.streams.keys()].filter((id) => id.startsWith('job-')).map((id) => id.slice(4));

const balancesOf = (accounts: readonly Account[], id: string): AccountBalances =>
  accounts.find((a) => a.id === id) ?? ZERO_BALANCES;

const sumOf = (transfers: readonly Transfer[], where: (t: Transfer) => boolean): bigint =>
  transfers.filter(where).reduce((s, t) => s + t.amount, 0n);

/**
 * Invariants 3, 6 and 7 per job, from the ledger alone: funded = paid + fees + refunded + pending
 * (+ what is still unaccrued in escrow); after settlement nothing is pending and the escrow is
 * empty; a provider at fault is paid for nothing past its billable GPU-seconds; and however the
 * usage was split into reports, each leg adds up to exactly the price of the total.
 */
export const checkJobs = (
  view: SettlementView,
  failures: ReadonlyMap<string, PayloadOf<typeof JobFailed>> = new Map(),
): void => {
  const { transfers } = view;
  for (const jobId of jobIds(view)) {
    const events = view.streams.get(`job-${jobId}`)!.map((e) => e as JobSettlementEvent);
    const state = foldEvents(jobSettlementDecider, events);
    if (state.status === 'unknown' || state.status === 'rejected') {
      expect(
        transfers.some((t) => t.jobId === jobId),
        `${jobId} moved money`,
      ).toBe(false);
      continue;
    }
    const escrow = escrowOf(state.asset, jobId);
    const own = transfers.filter((t) => t.jobId === jobId && t.debitAccountId === escrow);
    const funded = sumOf(transfers, (t) => t.code === 'escrow-fund' && t.jobId === jobId);
    expect(funded).toBe(state.funded);
    const posted = (code: Transfer['code']) =>
      sumOf(own, (t) => t.code === code && (t.kind === 'post-pending' || t.kind === 'posted'));
    const paid = posted('usage-charge');
    const fees = posted('fee-subnet') + posted('fee-platform');
    const refunded = posted('refund');
    const resolvedIds = new Set(own.filter((t) => t.pendingId !== null).map((t) => t.pendingId));
    const pending = sumOf(own, (t) => t.kind === 'pending' && !resolvedIds.has(t.id));
    const balances = balancesOf(view.accounts, escrow);
    const unaccrued = balances.creditsPosted - balances.debitsPosted - balances.debitsPending;
    expect(unaccrued >= 0n).toBe(true);
    expect(funded).toBe(paid + fees + refunded + pending + unaccrued);

    if (state.status !== 'settled') continue;
    const settled = state.settlement!;
    expect(pending, `${jobId} pending after settlement`).toBe(0n);
    expect(balances.creditsPosted - balances.debitsPosted, `${jobId} escrow after settlement`).toBe(0n);
    expect(balances.debitsPending).toBe(0n);
    expect(minor(settled.paidToProviders)).toBe(paid);
    expect(minor(settled.subnetFees) + minor(settled.platformFees)).toBe(fees);
    expect(minor(settled.refunded)).toBe(refunded);

    const failure = failures.get(jobId);
    for (const p of settled.providers) {
      const position = state.providers.get(p.providerId)!;
      const toProvider = sumOf(
        own,
        (t) => t.creditAccountId === payableOf(state.asset, p.providerId) && t.kind === 'post-pending',
      );
      const toSubnet = sumOf(
        own,
        (t) =>
          t.code === 'fee-subnet' && t.kind === 'post-pending' && t.pendingId!.includes(`:${p.providerId}:`),
      );
      // Rounding: the pieces add up to exactly the price of the total billed time.
      const exact = figuresFor(BigInt(p.gpuSecondsBilled), position.price, state.terms);
      expect(toProvider).toBe(exact.charge);
      expect(minor(p.paid)).toBe(exact.charge);
      expect(toSubnet).toBe(exact.subnetFee);
      expect(minor(p.platformFee)).toBe(exact.platformFee);
      // Accrued pieces add up to the price of the accrued billed time too.
      const accrued = sumOf(
        own,
        (t) =>
          t.kind === 'pending' &&
          t.code === 'usage-charge' &&
          t.creditAccountId === payableOf(state.asset, p.providerId),
      );
      expect(accrued).toBe(figuresFor(position.billed, position.price, state.terms).charge);
      // Nothing paid past a fault.
      const fault = failure?.faults.find((f) => f.providerId === p.providerId);
      if (fault) {
        expect(
          p.gpuSecondsBilled <= fault.billableGpuSeconds,
          `${jobId}/${p.providerId} billed past its fault`,
        ).toBe(true);
        expect(
          toProvider <= figuresFor(BigInt(fault.billableGpuSeconds), position.price, state.terms).charge,
        ).toBe(true);
      }
    }
    // Fees went to the stripes this job hashes to.
    expect(sumOf(own, (t) => t.code === 'fee-subnet' && t.kind === 'post-pending')).toBe(
      sumOf(
        own,
        (t) =>
          t.creditAccountId === treasuryOf(state.asset, state.subnetId, jobId) && t.kind === 'post-pending',
      ),
    );
    expect(sumOf(own, (t) => t.code === 'fee-platform' && t.kind === 'post-pending')).toBe(
      sumOf(
        own,
        (t) => t.creditAccountId === platformFeesOf(state.asset, jobId) && t.kind === 'post-pending',
      ),
    );
  }
};

/** The stake account a slash share comes from, as the subnet holds it: posted and held. */
const stakeAccountOf = (
  subnet: Extract<SubnetState, { exists: true }>,
  providerId: string,
  share: NonNullable<PayloadOf<typeof SubnetProviderSlashed>['shares']>[number],
): { stake: bigint; held: bigint } => {
  if (share.role === 'provider') {
    const member = subnet.members.get(providerId);
    return { stake: member?.stake ?? 0n, held: member?.held ?? 0n };
  }
  const delegation = subnet.delegations.get(delegationKey(share.stakerId, providerId));
  return { stake: delegation?.amount ?? 0n, held: delegation?.held ?? 0n };
};

/**
 * Invariant 9: a slash never takes more from a stake account than it holds. Each share is checked
 * against its own account, in the subnet as it stood just before: when the slash is proposed, the
 * provider's share against what is free (not held by other slashes) of its own stake and each
 * delegator's against what is free of its delegation; when it is taken, each share against that
 * account's posted stake. A slash's delegated part may well outweigh the provider's own stake.
 * The shares add up to the slash, and a slash is never of nothing.
 */
export const checkSlashes = (view: SettlementView): void => {
  const subnets = new Map<string, SubnetState>();
  for (const { streamId, event } of view.log) {
    if (!streamId.startsWith('subnet-')) continue;
    const before = subnets.get(streamId) ?? subnetDecider.initialState;
    const e = event as SubnetEvent;
    subnets.set(streamId, subnetDecider.evolve(before, e));
    if (e.type !== 'subnet.slash-proposed' && e.type !== 'subnet.provider-slashed') continue;
    const { slashId, providerId } = e.data;
    const label = `${streamId}/${slashId ?? providerId}`;
    expect(minor(e.data.amount) > 0n, `${label}: a slash of nothing`).toBe(true);
    if (!before.exists) throw new Error(`${label}: a slash in a subnet that does not exist`);
    if (e.type === 'subnet.provider-slashed' && e.data.shares === undefined) {
      // Taken before slashes were split (no shares): the provider alone lost the whole amount.
      expect(minor(e.data.amount) <= minor(e.data.stakeBefore), `${label} exceeds the stake`).toBe(true);
      continue;
    }
    const shares = e.data.shares ?? [];
    expect(
      shares.reduce((sum, share) => sum + minor(share.amount), 0n),
      `${label}: shares ≠ amount`,
    ).toBe(minor(e.data.amount));
    // Proposed: the share is about to be held, so it must fit in what is free. Taken: it is held
    // already (part of `held`), so it must fit in the posted stake.
    const proposed = e.type === 'subnet.slash-proposed';
    for (const share of shares) {
      const { stake, held } = stakeAccountOf(before, providerId, share);
      const limit = proposed ? stake - held : stake;
      expect(
        minor(share.amount) <= limit,
        `${label}: ${share.role} ${share.stakerId}'s share ${share.amount} exceeds its stake ${limit}`,
      ).toBe(true);
      if (share.role === 'provider') expect(share.stakerId, `${label}: provider share`).toBe(providerId);
    }
  }
};

/** What a job and its subnet decided on: the subnet as settlement read it for each job decision. */
interface JobDecisionSeen {
  readonly jobId: string;
  readonly event: JobSettlementEvent;
  readonly subnet: SubnetState;
}

/**
 * Each job event with its subnet as it stood when the event was decided: the subnet's events before
 * it in the log (deliveries are serial, so the log is the order of the decisions).
 */
const jobDecisions = (view: SettlementView): JobDecisionSeen[] => {
  const subnets = new Map<string, SubnetState>();
  const jobs = new Map<string, JobSettlementState>();
  const seen: JobDecisionSeen[] = [];
  for (const { streamId, event } of view.log) {
    if (streamId.startsWith('subnet-')) {
      const before = subnets.get(streamId) ?? subnetDecider.initialState;
      subnets.set(streamId, subnetDecider.evolve(before, event as SubnetEvent));
      continue;
    }
    if (!streamId.startsWith('job-')) continue;
    const e = event as JobSettlementEvent;
    const before = jobs.get(streamId) ?? jobSettlementDecider.initialState;
    jobs.set(streamId, jobSettlementDecider.evolve(before, e));
    if (before.status !== 'funded') continue;
    seen.push({
      jobId: before.jobId,
      event: e,
      subnet: subnets.get(`subnet-${before.subnetId}`) ?? subnetDecider.initialState,
    });
  }
  return seen;
};

/**
 * Invariant 10: only members of the job's subnet (active or unbonding) when a report is metered
 * accrue its usage, and every provider listed as a non-member is none.
 */
export const checkMembership = (view: SettlementView): void => {
  for (const { jobId, event, subnet } of jobDecisions(view)) {
    if (event.type !== 'usage.metered') continue;
    for (const p of event.data.providers)
      expect(isBillableMember(subnet, p.providerId), `${jobId}: ${p.providerId} billed, not a member`).toBe(
        true,
      );
    for (const providerId of event.data.notMembers ?? [])
      expect(isBillableMember(subnet, providerId), `${jobId}: ${providerId} listed, but a member`).toBe(
        false,
      );
  }
};

/**
 * Invariant 11: each delegator's reward share is the floor of its part of what the provider was
 * paid, pro rata to the stakes when the job settled (a delegator's delegations as one; none of a
 * provider to itself); the shares never exceed the pay, and the ledger holds exactly those
 * reward-share transfers, from the provider's payable to the delegator's.
 */
export const checkRewardShares = (view: SettlementView): void => {
  const shareTransfers = view.transfers.filter((t) => t.code === 'reward-share');
  const settledJobs = new Set<string>();
  for (const { jobId, event, subnet } of jobDecisions(view)) {
    if (event.type !== 'job.settled') continue;
    settledJobs.add(jobId);
    const shares = event.data.delegatorShares ?? [];
    for (const p of event.data.providers) {
      const paid = minor(p.paid);
      const stakes = stakesOf(subnet, p.providerId);
      const delegated = new Map<string, bigint>();
      let total = stakes.own;
      for (const d of stakes.delegations) {
        total += d.amount;
        if (d.delegatorId !== p.providerId)
          delegated.set(d.delegatorId, (delegated.get(d.delegatorId) ?? 0n) + d.amount);
      }
      const mine = shares.filter((s) => s.providerId === p.providerId);
      expect(
        mine.reduce((sum, s) => sum + minor(s.amount), 0n) <= paid,
        `${jobId}/${p.providerId} shared more than paid`,
      ).toBe(true);
      for (const [delegatorId, amount] of delegated) {
        const share = minor(mine.find((s) => s.delegatorId === delegatorId)?.amount ?? '0');
        // share = ⌊paid × amount ÷ total⌋
        expect(
          share * total <= paid * amount && paid * amount < (share + 1n) * total,
          `${jobId}: ${delegatorId}'s share of ${p.providerId}`,
        ).toBe(true);
      }
      for (const s of mine) expect(delegated.has(s.delegatorId) && minor(s.amount) > 0n).toBe(true);
    }
    const { asset } = event.data;
    expect(
      shareTransfers
        .filter((t) => t.jobId === jobId)
        .map((t) => [t.id, t.kind, t.debitAccountId, t.creditAccountId, t.amount]),
    ).toEqual(
      shares.map((s) => [
        `reward-share:${jobId}:${s.providerId}:${s.delegatorId}`,
        'posted',
        payableOf(asset, s.providerId),
        payableOf(asset, s.delegatorId),
        minor(s.amount),
      ]),
    );
  }
  for (const t of shareTransfers)
    expect(settledJobs.has(t.jobId!), `${t.id} of a job not settled`).toBe(true);
};

/**
 * Rebuilds the ledger from settlement's own event log (streams replayed in the order they were
 * appended), as a projection rebuild would: every transfer derives from an event.
 */
export const replayLedger = (log: SettlementView['log']): Ledger => {
  const ledger = Ledger.empty();
  const states = new Map<string, unknown>();
  for (const { streamId, event } of log) {
    const kind = streamId.split('-')[0]!;
    const [decider, effects] = REPLAYERS[kind] ?? [undefined, undefined];
    if (!decider || !effects) continue;
    const before = states.get(streamId) ?? decider.initialState;
    ledger.apply(effects(before, event as never));
    states.set(streamId, decider.evolve(before, event as never));
  }
  return ledger;
};

type Replayer = [
  { initialState: unknown; evolve: (s: unknown, e: never) => unknown },
  (s: unknown, e: never) => Transfer[],
];
const REPLAYERS: Record<string, Replayer> = {
  job: [jobSettlementDecider as never, jobTransfers as never],
  subnet: [subnetDecider as never, subnetTransfers as never],
  deposit: [depositDecider as never, depositTransfers as never],
  withdrawal: [withdrawalDecider as never, withdrawalTransfers as never],
};
export type { DepositEvent, WithdrawalEvent };

export const hashOf = (ledger: Ledger): string => ledgerHash(ledger.accounts(), ledger.transfers());

/** The same fingerprint of the ledger as Postgres holds it. */
export const viewHash = (view: LedgerView): string => ledgerHash(view.accounts, view.transfers);
