import {
  type Decider,
  type DomainEvent,
  type EscrowExhausted,
  type EscrowLow,
  type EscrowRejected,
  type JobFunded,
  type JobSettled,
  type JobSubmitted,
  type PayloadOf,
  type ProviderFaultSchema,
  type ProviderUsageSchema,
  type SubnetParametersSchema,
  type UsageMetered,
} from '@gpunet/contracts';
import type { z } from 'zod';
import { maxOf, minOf, minor, toWire } from '../money';
import {
  billedGpuSeconds,
  budgetFor,
  type Figures,
  figuresFor,
  type JobTerms,
  largestAffordable,
  listPrice,
  priceFor,
  totalOf,
} from './pricing';
import { NO_STAKE, rewardShares, type StakeHolders } from './reward-shares';

/*
 * One job's money, as a decider (stream `job-<jobId>`): escrow at submission, metering of usage as
 * pending transfers, settlement at the end. Every event here maps to ledger transfers by a pure
 * function (`job-settlement.effects.ts`), so the ledger is a function of this stream.
 */

export type ProviderUsage = z.output<typeof ProviderUsageSchema>;
export type ProviderFault = z.output<typeof ProviderFaultSchema>;
export type SubnetParameters = z.output<typeof SubnetParametersSchema>;

export type JobSettlementEvent =
  | DomainEvent<'job.funded', PayloadOf<typeof JobFunded>>
  | DomainEvent<'escrow.rejected', PayloadOf<typeof EscrowRejected>>
  | DomainEvent<'usage.metered', PayloadOf<typeof UsageMetered>>
  | DomainEvent<'escrow.low', PayloadOf<typeof EscrowLow>>
  | DomainEvent<'escrow.exhausted', PayloadOf<typeof EscrowExhausted>>
  | DomainEvent<'job.settled', PayloadOf<typeof JobSettled>>;

/** What funding needs to know of the job's subnet: its current parameters version. */
export interface SubnetTermsView {
  readonly subnetId: string;
  readonly asset: string;
  readonly version: number;
  readonly parameters: SubnetParameters;
}

export type JobSettlementCommand =
  | {
      readonly type: 'FundJob';
      readonly job: PayloadOf<typeof JobSubmitted>;
      /** The subnet as it is now, or null when it does not exist. */
      readonly subnet: SubnetTermsView | null;
      /** The tenant wallet's available balance (read under lock). */
      readonly available: bigint;
      readonly platformFeeBps: number;
      readonly lowEscrowBps: number;
      readonly at: string;
    }
  | {
      readonly type: 'MeterUsage';
      readonly jobId: string;
      readonly seq: number;
      readonly providers: readonly ProviderUsage[];
      /**
       * The providers that are billable members of the job's subnet now (active or unbonding), read
       * from the subnet when the report is metered; any other provider's usage accrues nothing.
       */
      readonly billable: readonly string[];
      readonly at: string;
    }
  | {
      readonly type: 'SettleJob';
      readonly jobId: string;
      readonly outcome: 'completed' | 'failed' | 'cancelled';
      /** Final cumulative readings. */
      readonly usage: readonly ProviderUsage[];
      readonly faults: readonly ProviderFault[];
      /** The providers of `usage` that are billable members of the job's subnet now (see MeterUsage). */
      readonly billable: readonly string[];
      /**
       * Each provider's own stake and delegations in the job's subnet now, for its delegators' shares
       * of its pay (a provider not listed shares nothing).
       */
      readonly stakes: ReadonlyMap<string, StakeHolders>;
      readonly at: string;
    };

/** Which account a usage accrual pays: the provider, the subnet's treasury, the platform. */
export type Leg = 'charge' | 'subnet-fee' | 'platform-fee';
export const LEGS: readonly Leg[] = ['charge', 'subnet-fee', 'platform-fee'];

/** A pending transfer of one leg, in the order accrued. */
export interface PendingLeg {
  readonly id: string;
  readonly leg: Leg;
  readonly amount: bigint;
}

export interface ProviderPosition extends Figures {
  readonly providerId: string;
  readonly gpuClass: string;
  readonly gpus: number;
  readonly price: bigint;
  /** Highest cumulative reading seen. */
  readonly reported: bigint;
  readonly billed: bigint;
  readonly pendings: readonly PendingLeg[];
}

export interface FundedJob {
  readonly status: 'funded' | 'settled';
  readonly jobId: string;
  readonly tenantId: string;
  readonly subnetId: string;
  readonly subnetVersion: number;
  readonly asset: string;
  readonly gpus: number;
  readonly maxDurationSeconds: number;
  readonly terms: JobTerms;
  readonly funded: bigint;
  /** Accrued (pending or posted) across all providers and legs. */
  readonly accrued: bigint;
  readonly providers: ReadonlyMap<string, ProviderPosition>;
  readonly meteredSeqs: ReadonlySet<number>;
  readonly lowRaised: boolean;
  readonly exhaustedRaised: boolean;
  readonly settlement: PayloadOf<typeof JobSettled> | null;
}

export type JobSettlementState =
  | { readonly status: 'unknown' }
  | { readonly status: 'rejected'; readonly jobId: string; readonly tenantId: string }
  | FundedJob;

/**
 * Usage or an end arrived for a job whose submission settlement has not applied yet (its stream
 * may be behind another's). Retryable: the consumer naks with backoff and the submission catches up.
 */
export class JobNotKnownYetError extends Error {
  override readonly name = 'JobNotKnownYetError';
  readonly code = 'JOB_NOT_KNOWN_YET';
  readonly retryable = true;
  constructor(readonly jobId: string) {
    super(`job ${jobId} has not been submitted to settlement yet`);
  }
}

export const pendingLegId = (jobId: string, providerId: string, seq: number, leg: Leg): string =>
  `usage:${jobId}:${providerId}:${seq}:${leg}`;

const legAmount = (f: Figures, leg: Leg): bigint =>
  leg === 'charge' ? f.charge : leg === 'subnet-fee' ? f.subnetFee : f.platformFee;

const ZERO_FIGURES: Figures = { charge: 0n, subnetFee: 0n, platformFee: 0n };

/** The pending transfers a metered provider adds: the positive differences of its cumulative figures. */
export const meteredLegs = (
  jobId: string,
  seq: number,
  previous: Figures | undefined,
  next: PayloadOf<typeof UsageMetered>['providers'][number],
): PendingLeg[] => {
  const nextFigures: Figures = {
    charge: minor(next.charge),
    subnetFee: minor(next.subnetFee),
    platformFee: minor(next.platformFee),
  };
  return LEGS.flatMap((leg) => {
    const amount = legAmount(nextFigures, leg) - legAmount(previous ?? ZERO_FIGURES, leg);
    return amount > 0n ? [{ id: pendingLegId(jobId, next.providerId, seq, leg), leg, amount }] : [];
  });
};

// ------------------------------------------------------------------------------------------
// decide

const fundJob = (
  command: Extract<JobSettlementCommand, { type: 'FundJob' }>,
  state: JobSettlementState,
): JobSettlementEvent[] => {
  if (state.status !== 'unknown') return []; // a redelivered submission: already decided
  const { job, subnet, at } = command;
  const reject = (
    reason: PayloadOf<typeof EscrowRejected>['reason'],
    message: string,
    required: bigint | null = null,
    available: bigint | null = null,
  ): JobSettlementEvent[] => [
    {
      type: 'escrow.rejected',
      data: {
        jobId: job.jobId,
        tenantId: job.tenantId,
        subnetId: job.subnetId,
        asset: job.asset,
        reason,
        message,
        required: required === null ? null : toWire(required),
        available: available === null ? null : toWire(maxOf(available, 0n)),
        rejectedAt: at,
      },
    },
  ];
  if (subnet === null) return reject('unknown-subnet', `subnet ${job.subnetId} does not exist`);
  if (subnet.asset !== job.asset)
    return reject('asset-mismatch', `subnet ${job.subnetId} settles in ${subnet.asset}, not ${job.asset}`);
  const params = subnet.parameters;
  const accepted =
    job.gpuClasses.length === 0
      ? params.gpuClasses
      : params.gpuClasses.filter((c) => job.gpuClasses.includes(c));
  if (accepted.length === 0)
    return reject('no-allowed-gpu-class', `subnet ${job.subnetId} runs none of ${job.gpuClasses.join(', ')}`);
  const maxPrice = minor(job.maxPricePerGpuHour);
  const affordable = accepted.filter((c) => {
    const price = listPrice(params, c);
    return price !== undefined && price <= maxPrice;
  });
  if (affordable.length === 0)
    return reject(
      'price-below-subnet-price',
      `max price ${job.maxPricePerGpuHour}/GPU-hour is below subnet ${job.subnetId}'s price for every accepted class`,
    );
  const table = Object.fromEntries(affordable.map((c) => [c, toWire(listPrice(params, c)!)]));
  const terms: JobTerms = {
    pricing:
      params.pricing.mode === 'fixed'
        ? { mode: 'fixed', pricePerGpuHour: table }
        : { mode: 'auction', reservePricePerGpuHour: table },
    maxPricePerGpuHour: job.maxPricePerGpuHour,
    billingIncrementSeconds: params.billingIncrementSeconds,
    minimumChargeSeconds: params.minimumChargeSeconds,
    subnetFeeBps: params.subnetFeeBps,
    platformFeeBps: command.platformFeeBps,
    lowEscrowBps: command.lowEscrowBps,
    slashing: params.slashing,
    trust: params.trust,
    slashingPolicy: params.slashingPolicy,
  };
  const budget = budgetFor(terms, job.gpus, job.maxDurationSeconds);
  if (command.available < budget.escrow)
    return reject(
      'insufficient-funds',
      `escrow of ${budget.escrow} ${job.asset} exceeds the available ${maxOf(command.available, 0n)}`,
      budget.escrow,
      command.available,
    );
  return [
    {
      type: 'job.funded',
      data: {
        jobId: job.jobId,
        tenantId: job.tenantId,
        subnetId: job.subnetId,
        subnetVersion: subnet.version,
        asset: job.asset,
        gpus: job.gpus,
        gpuClasses: affordable,
        maxDurationSeconds: job.maxDurationSeconds,
        escrow: toWire(budget.escrow),
        maxCharge: toWire(budget.charge),
        subnetFee: toWire(budget.subnetFee),
        platformFee: toWire(budget.platformFee),
        terms,
        fundedAt: at,
      },
    },
  ];
};

/**
 * Prices new readings of the billable members; accrues what the escrow covers and says how much it
 * could not. A provider that is not a billable member accrues nothing: it is listed in `notMembers`
 * and what it would have cost stays in the escrow, for the tenant's refund.
 */
const meter = (
  state: FundedJob,
  seq: number,
  usage: readonly ProviderUsage[],
  billable: ReadonlySet<string>,
  at: string,
): { events: JobSettlementEvent[]; remaining: bigint; shortfall: bigint } => {
  const latest = new Map<string, ProviderUsage>();
  for (const u of usage) {
    const seen = latest.get(u.providerId);
    if (!seen || u.gpuSeconds > seen.gpuSeconds) latest.set(u.providerId, u);
  }
  let remaining = state.funded - state.accrued;
  let shortfall = 0n;
  const changed: PayloadOf<typeof UsageMetered>['providers'] = [];
  const notMembers: string[] = [];
  for (const providerId of [...latest.keys()].sort()) {
    const u = latest.get(providerId)!;
    const position = state.providers.get(providerId);
    const reported = BigInt(u.gpuSeconds);
    if (position ? reported <= position.reported : reported === 0n) continue; // nothing new
    if (!billable.has(providerId)) {
      notMembers.push(providerId);
      continue;
    }
    const gpus = position?.gpus ?? u.gpus;
    const gpuClass = position?.gpuClass ?? u.gpuClass;
    const price = position?.price ?? priceFor(state.terms, gpuClass, u.agreedPricePerGpuHour);
    const before = position ?? ZERO_FIGURES;
    const previouslyBilled = position?.billed ?? 0n;
    const wanted = maxOf(
      billedGpuSeconds(reported, gpus, state.terms, state.maxDurationSeconds),
      previouslyBilled,
    );
    let billed = wanted;
    if (totalOf(figuresFor(wanted, price, state.terms)) - totalOf(before) > remaining) {
      billed = largestAffordable(previouslyBilled, wanted, price, state.terms, totalOf(before) + remaining);
      shortfall += wanted - billed;
    }
    const figures = figuresFor(billed, price, state.terms);
    remaining -= totalOf(figures) - totalOf(before);
    changed.push({
      providerId,
      gpuClass,
      gpus,
      gpuSecondsReported: Number(reported),
      gpuSecondsBilled: Number(billed),
      pricePerGpuHour: toWire(price),
      charge: toWire(figures.charge),
      subnetFee: toWire(figures.subnetFee),
      platformFee: toWire(figures.platformFee),
    });
  }
  const events: JobSettlementEvent[] = [];
  if (changed.length > 0) {
    events.push({
      type: 'usage.metered',
      data: {
        jobId: state.jobId,
        seq,
        providers: changed,
        accrued: toWire(state.funded - remaining),
        remaining: toWire(remaining),
        meteredAt: at,
        ...(notMembers.length > 0 ? { notMembers } : {}),
      },
    });
  }
  if (shortfall > 0n && !state.exhaustedRaised) {
    events.push({
      type: 'escrow.exhausted',
      data: {
        jobId: state.jobId,
        asset: state.asset,
        funded: toWire(state.funded),
        remaining: toWire(remaining),
        unbilledGpuSeconds: Number(shortfall),
        raisedAt: at,
      },
    });
  }
  return { events, remaining, shortfall };
};

const meterUsage = (
  command: Extract<JobSettlementCommand, { type: 'MeterUsage' }>,
  state: JobSettlementState,
): JobSettlementEvent[] => {
  if (state.status === 'unknown') throw new JobNotKnownYetError(command.jobId);
  // Rejected jobs never run; late reports after settlement change nothing (the end carried the
  // final readings); a sequence number seen before is a redelivery.
  if (state.status !== 'funded' || state.meteredSeqs.has(command.seq)) return [];
  const { events, remaining } = meter(
    state,
    command.seq,
    command.providers,
    new Set(command.billable),
    command.at,
  );
  const lowMark = state.funded * BigInt(state.terms.lowEscrowBps);
  if (!state.lowRaised && state.funded > 0n && remaining * 10_000n < lowMark) {
    events.push({
      type: 'escrow.low',
      data: {
        jobId: state.jobId,
        asset: state.asset,
        funded: toWire(state.funded),
        remaining: toWire(remaining),
        thresholdBps: state.terms.lowEscrowBps,
        raisedAt: command.at,
      },
    });
  }
  return events;
};

const settleJob = (
  command: Extract<JobSettlementCommand, { type: 'SettleJob' }>,
  state: JobSettlementState,
): JobSettlementEvent[] => {
  if (state.status === 'unknown') throw new JobNotKnownYetError(command.jobId);
  if (state.status !== 'funded') return [];
  const { events } = meter(state, 0, command.usage, new Set(command.billable), command.at);
  const after = events.reduce(evolve, state as JobSettlementState) as FundedJob;
  const cap = new Map<string, bigint>();
  for (const f of command.faults) {
    const billable = BigInt(f.billableGpuSeconds);
    cap.set(f.providerId, minOf(cap.get(f.providerId) ?? billable, billable));
  }
  const providers = [...after.providers.values()]
    .sort((a, b) => (a.providerId < b.providerId ? -1 : 1))
    .map((p) => {
      // A provider at fault is paid for its billable GPU-seconds exactly: no minimum, no rounding up.
      const limit = cap.get(p.providerId);
      const billed = limit === undefined ? p.billed : minOf(p.billed, limit);
      const paid = figuresFor(billed, p.price, after.terms);
      return { p, billed, paid };
    });
  const spent = providers.reduce((total, { paid }) => total + totalOf(paid), 0n);
  const sumOf = (pick: (f: Figures) => bigint) => providers.reduce((t, { paid }) => t + pick(paid), 0n);
  // Delegators share what the provider is paid (after any fault), never what it forfeited.
  const delegatorShares = providers.flatMap(({ p, paid }) =>
    rewardShares(p.providerId, paid.charge, command.stakes.get(p.providerId) ?? NO_STAKE).map((share) => ({
      providerId: p.providerId,
      delegatorId: share.delegatorId,
      amount: toWire(share.amount),
    })),
  );
  events.push({
    type: 'job.settled',
    data: {
      jobId: after.jobId,
      tenantId: after.tenantId,
      subnetId: after.subnetId,
      asset: after.asset,
      outcome: command.outcome,
      funded: toWire(after.funded),
      paidToProviders: toWire(sumOf((f) => f.charge)),
      subnetFees: toWire(sumOf((f) => f.subnetFee)),
      platformFees: toWire(sumOf((f) => f.platformFee)),
      refunded: toWire(after.funded - spent),
      providers: providers.map(({ p, billed, paid }) => ({
        providerId: p.providerId,
        gpuSecondsBilled: Number(billed),
        paid: toWire(paid.charge),
        subnetFee: toWire(paid.subnetFee),
        platformFee: toWire(paid.platformFee),
        forfeited: toWire(p.charge - paid.charge),
      })),
      ...(delegatorShares.length > 0 ? { delegatorShares } : {}),
      settledAt: command.at,
    },
  });
  return events;
};

// ------------------------------------------------------------------------------------------
// evolve

const evolve = (state: JobSettlementState, event: JobSettlementEvent): JobSettlementState => {
  switch (event.type) {
    case 'job.funded': {
      const d = event.data;
      return {
        status: 'funded',
        jobId: d.jobId,
        tenantId: d.tenantId,
        subnetId: d.subnetId,
        subnetVersion: d.subnetVersion,
        asset: d.asset,
        gpus: d.gpus,
        maxDurationSeconds: d.maxDurationSeconds,
        terms: d.terms,
        funded: minor(d.escrow),
        accrued: 0n,
        providers: new Map(),
        meteredSeqs: new Set(),
        lowRaised: false,
        exhaustedRaised: false,
        settlement: null,
      };
    }
    case 'escrow.rejected':
      return { status: 'rejected', jobId: event.data.jobId, tenantId: event.data.tenantId };
    case 'usage.metered': {
      if (state.status !== 'funded') return state;
      const providers = new Map(state.providers);
      for (const p of event.data.providers) {
        const before = providers.get(p.providerId);
        providers.set(p.providerId, {
          providerId: p.providerId,
          gpuClass: p.gpuClass,
          gpus: p.gpus,
          price: minor(p.pricePerGpuHour),
          reported: BigInt(p.gpuSecondsReported),
          billed: BigInt(p.gpuSecondsBilled),
          charge: minor(p.charge),
          subnetFee: minor(p.subnetFee),
          platformFee: minor(p.platformFee),
          pendings: [...(before?.pendings ?? []), ...meteredLegs(state.jobId, event.data.seq, before, p)],
        });
      }
      return {
        ...state,
        providers,
        accrued: minor(event.data.accrued),
        meteredSeqs: new Set([...state.meteredSeqs, event.data.seq]),
      };
    }
    case 'escrow.low':
      return state.status === 'funded' ? { ...state, lowRaised: true } : state;
    case 'escrow.exhausted':
      return state.status === 'funded' ? { ...state, exhaustedRaised: true } : state;
    case 'job.settled':
      return state.status === 'funded' ? { ...state, status: 'settled', settlement: event.data } : state;
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};

const decide = (command: JobSettlementCommand, state: JobSettlementState): JobSettlementEvent[] => {
  switch (command.type) {
    case 'FundJob':
      return fundJob(command, state);
    case 'MeterUsage':
      return meterUsage(command, state);
    case 'SettleJob':
      return settleJob(command, state);
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
};

export const jobSettlementDecider: Decider<JobSettlementCommand, JobSettlementEvent, JobSettlementState> = {
  initialState: { status: 'unknown' },
  decide,
  evolve,
};
