import {
  type Clock,
  type Decider,
  type DomainEvent,
  type Envelope,
  foldEvents,
  type JobCancelled,
  type JobCompleted,
  type JobFailed,
  type JobSubmitted,
  type PayloadOf,
  type SubnetCreateRequested,
  type SubnetJoinRequested,
  type SubnetLeaveRequested,
  type SubnetParametersUpdateRequested,
  type UsageReported,
  type WithdrawalRequested,
} from '@gpunet/contracts';
import { escrowOf, stakeOf, walletOf } from '../domain/accounts';
import {
  jobSettlementDecider,
  type JobSettlementState,
  jobStreamId,
  type ProviderFault,
  type SubnetTermsView,
} from '../domain/job/job-settlement.decider';
import { jobTransfers } from '../domain/job/job-settlement.effects';
import { availableOf, type Transfer, ZERO_BALANCES } from '../domain/ledger/transfer';
import { minor } from '../domain/money';
import { reconcile, type ReconciliationEvent } from '../domain/reconciliation';
import { subnetDecider, type SubnetState, subnetStreamId } from '../domain/subnet/subnet.decider';
import { subnetTransfers } from '../domain/subnet/subnet.effects';
import {
  depositDecider,
  depositStreamId,
  depositTransfers,
  type DepositEvent,
} from '../domain/wallet/deposit.decider';
import {
  withdrawalDecider,
  withdrawalSourceOf,
  type WithdrawalState,
  withdrawalStreamId,
  withdrawalTransfers,
} from '../domain/wallet/withdrawal.decider';
import { chainClearingOf } from '../domain/accounts';
import type { EventMeta, UnitOfWork } from './settlement.ports';

/** The platform's economic settings (docs/economy.md). */
export interface SettlementConfig {
  /** Platform fee on top of the providers' charge, in basis points. Default 200 (2 %). */
  readonly platformFeeBps: number;
  /** `escrow.low` below this share of a job's escrow, in basis points. Default 1000 (10 %). */
  readonly lowEscrowBps: number;
  /** Least stake that creates a subnet, in minor units. */
  readonly minSubnetCreationStake: bigint;
}

export const DEFAULT_SETTLEMENT_CONFIG: SettlementConfig = {
  platformFeeBps: 200,
  lowEscrowBps: 1_000,
  minSubnetCreationStake: 1_000_000_000n,
};

/** The messages settlement consumes, by type. */
export const CONSUMED_TYPES = [
  'job.submitted',
  'usage.reported',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'subnet.create-requested',
  'subnet.parameters-update-requested',
  'subnet.join-requested',
  'subnet.leave-requested',
  'withdrawal.requested',
] as const;

type Effects<S, E> = (state: S, event: E) => Transfer[];

/** What one step decided. */
export interface Step<S, E> {
  readonly state: S;
  readonly events: readonly E[];
}

/**
 * Settlement's application logic, storage-agnostic: each step locks the stream it decides on,
 * folds it, builds the command (reading balances under lock where the decision needs them),
 * decides, applies the events' transfers to the ledger — which refuses anything that breaks a
 * balance rule — and appends the events, all in the caller's unit of work (one transaction). The
 * Nest consumers call it with a Postgres unit of work; the property tests with a memory one.
 */
export class SettlementWorkflow {
  constructor(
    private readonly config: SettlementConfig,
    private readonly clock: Clock,
  ) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** Applies one consumed message. */
  async handle(uow: UnitOfWork, envelope: Envelope): Promise<void> {
    const meta: EventMeta = { correlationId: envelope.correlationId, causationId: envelope.eventId };
    const type = envelope.type as (typeof CONSUMED_TYPES)[number];
    switch (type) {
      case 'job.submitted':
        await this.fundJob(uow, envelope.data as PayloadOf<typeof JobSubmitted>, meta);
        return;
      case 'usage.reported': {
        const d = envelope.data as PayloadOf<typeof UsageReported>;
        await this.step(uow, jobStreamId(d.jobId), jobSettlementDecider, jobTransfers, meta, () => ({
          type: 'MeterUsage' as const,
          jobId: d.jobId,
          seq: d.seq,
          providers: d.providers,
          at: this.now(),
        }));
        return;
      }
      case 'job.completed': {
        const d = envelope.data as PayloadOf<typeof JobCompleted>;
        await this.settleJob(uow, d.jobId, 'completed', d.usage, d.faults, meta);
        return;
      }
      case 'job.failed': {
        const d = envelope.data as PayloadOf<typeof JobFailed>;
        await this.settleJob(uow, d.jobId, 'failed', d.usage, d.faults, meta);
        return;
      }
      case 'job.cancelled': {
        const d = envelope.data as PayloadOf<typeof JobCancelled>;
        await this.settleJob(uow, d.jobId, 'cancelled', d.usage, [], meta);
        return;
      }
      case 'subnet.create-requested': {
        const r = envelope.data as PayloadOf<typeof SubnetCreateRequested>;
        await this.step(
          uow,
          subnetStreamId(r.subnetId),
          subnetDecider,
          subnetTransfers,
          meta,
          async (state) => {
            if (state.exists)
              return {
                type: 'CreateSubnet' as const,
                request: r,
                available: 0n,
                minCreationStake: 0n,
                at: this.now(),
              };
            const wallet = walletOf(r.asset, r.ownerId);
            const balances = await uow.lockAccounts([wallet, stakeOf(r.asset, r.ownerId, r.subnetId)]);
            return {
              type: 'CreateSubnet' as const,
              request: r,
              available: availableOf(balances.get(wallet) ?? ZERO_BALANCES),
              minCreationStake: this.config.minSubnetCreationStake,
              at: this.now(),
            };
          },
        );
        return;
      }
      case 'subnet.parameters-update-requested': {
        const r = envelope.data as PayloadOf<typeof SubnetParametersUpdateRequested>;
        await this.step(uow, subnetStreamId(r.subnetId), subnetDecider, subnetTransfers, meta, () => ({
          type: 'UpdateParameters' as const,
          subnetId: r.subnetId,
          ownerId: r.ownerId,
          parameters: r.parameters,
          at: this.now(),
        }));
        return;
      }
      case 'subnet.join-requested': {
        const r = envelope.data as PayloadOf<typeof SubnetJoinRequested>;
        await this.step(
          uow,
          subnetStreamId(r.subnetId),
          subnetDecider,
          subnetTransfers,
          meta,
          async (state) => {
            let available = 0n;
            if (state.exists) {
              const wallet = walletOf(state.asset, r.providerId);
              const balances = await uow.lockAccounts([
                wallet,
                stakeOf(state.asset, r.providerId, r.subnetId),
              ]);
              available = availableOf(balances.get(wallet) ?? ZERO_BALANCES);
            }
            return {
              type: 'JoinSubnet' as const,
              subnetId: r.subnetId,
              providerId: r.providerId,
              stake: minor(r.stake),
              available,
              at: this.now(),
            };
          },
        );
        return;
      }
      case 'subnet.leave-requested': {
        const r = envelope.data as PayloadOf<typeof SubnetLeaveRequested>;
        await this.step(uow, subnetStreamId(r.subnetId), subnetDecider, subnetTransfers, meta, () => ({
          type: 'LeaveSubnet' as const,
          subnetId: r.subnetId,
          providerId: r.providerId,
          at: this.now(),
        }));
        return;
      }
      case 'withdrawal.requested': {
        const r = envelope.data as PayloadOf<typeof WithdrawalRequested>;
        await this.step(
          uow,
          withdrawalStreamId(r.withdrawalId),
          withdrawalDecider,
          withdrawalTransfers,
          meta,
          async () => {
            const source = withdrawalSourceOf(r);
            const balances = await uow.lockAccounts([source, chainClearingOf(r.asset)]);
            return {
              type: 'RequestWithdrawal' as const,
              request: r,
              available: availableOf(balances.get(source) ?? ZERO_BALANCES),
              at: this.now(),
            };
          },
        );
        return;
      }
      default: {
        const unreachable: never = type;
        throw new Error(`settlement does not consume ${String(unreachable)}`);
      }
    }
  }

  /** Escrow at submission: `job.funded`, or `escrow.rejected` and the job is never scheduled. */
  async fundJob(
    uow: UnitOfWork,
    job: PayloadOf<typeof JobSubmitted>,
    meta: EventMeta,
  ): Promise<Step<JobSettlementState, DomainEvent>> {
    // The subnet is read without a lock: a parameters update racing with funding applies to one side
    // of it or the other, and both are valid versions.
    const subnet = foldEvents(
      subnetDecider,
      (await uow.readStream(subnetStreamId(job.subnetId))).events as Parameters<
        typeof subnetDecider.evolve
      >[1][],
    );
    return this.step(uow, jobStreamId(job.jobId), jobSettlementDecider, jobTransfers, meta, async (state) => {
      if (state.status !== 'unknown') return null;
      const wallet = walletOf(job.asset, job.tenantId);
      const balances = await uow.lockAccounts([wallet, escrowOf(job.asset, job.jobId)]);
      return {
        type: 'FundJob' as const,
        job,
        subnet: termsView(subnet),
        available: availableOf(balances.get(wallet) ?? ZERO_BALANCES),
        platformFeeBps: this.config.platformFeeBps,
        lowEscrowBps: this.config.lowEscrowBps,
        at: this.now(),
      };
    });
  }

  /** Pays providers, subnet and platform, refunds the rest, slashes verified faults. */
  async settleJob(
    uow: UnitOfWork,
    jobId: string,
    outcome: 'completed' | 'failed' | 'cancelled',
    usage: PayloadOf<typeof JobCompleted>['usage'],
    faults: readonly ProviderFault[],
    meta: EventMeta,
  ): Promise<void> {
    const { state, events } = await this.step(
      uow,
      jobStreamId(jobId),
      jobSettlementDecider,
      jobTransfers,
      meta,
      () => ({ type: 'SettleJob' as const, jobId, outcome, usage, faults, at: this.now() }),
    );
    if (state.status !== 'settled' || !events.some((e) => e.type === 'job.settled')) return;
    for (const fault of faults) {
      const bps = state.terms.slashing[fault.kind] ?? 0;
      if (!fault.verified || bps === 0) continue;
      await this.step(uow, subnetStreamId(state.subnetId), subnetDecider, subnetTransfers, meta, () => ({
        type: 'SlashProvider' as const,
        providerId: fault.providerId,
        jobId,
        kind: fault.kind,
        bps,
        at: this.now(),
      }));
    }
  }

  /** Releases the stake of every provider of the subnet whose unbonding period is over. */
  releaseUnbonded(
    uow: UnitOfWork,
    subnetId: string,
    meta: EventMeta,
  ): Promise<Step<SubnetState, DomainEvent>> {
    return this.step(uow, subnetStreamId(subnetId), subnetDecider, subnetTransfers, meta, () => ({
      type: 'ReleaseUnbonded' as const,
      at: this.now(),
    }));
  }

  /** Credits a deposit the chain adapter confirmed (at most once per deposit id). */
  recordDeposit(
    uow: UnitOfWork,
    deposit: Extract<DepositEvent, { type: 'deposit.confirmed' }>['data'],
    meta: EventMeta,
  ): Promise<Step<{ recorded: boolean }, DomainEvent>> {
    return this.step(
      uow,
      depositStreamId(deposit.asset, deposit.depositId),
      depositDecider,
      depositTransfers,
      meta,
      () => ({ type: 'RecordDeposit' as const, deposit }),
    );
  }

  /** The chain confirmed (or refused) a withdrawal: post (or void) its hold. */
  resolveWithdrawal(
    uow: UnitOfWork,
    withdrawalId: string,
    outcome: { confirmed: true; chainTxId: string } | { confirmed: false; reason: string },
    meta: EventMeta,
  ): Promise<Step<WithdrawalState, DomainEvent>> {
    return this.step(
      uow,
      withdrawalStreamId(withdrawalId),
      withdrawalDecider,
      withdrawalTransfers,
      meta,
      () =>
        outcome.confirmed
          ? { type: 'CompleteWithdrawal' as const, chainTxId: outcome.chainTxId, at: this.now() }
          : { type: 'FailWithdrawal' as const, reason: outcome.reason, at: this.now() },
    );
  }

  /** Checks one asset's ledger and custody; appends a mismatch event for anything that does not add up. */
  async reconcile(
    uow: UnitOfWork,
    asset: string,
    custody: bigint | null,
    chain: string,
    meta: EventMeta,
  ): Promise<ReconciliationEvent[]> {
    const streamId = `reconciliation-${asset}`;
    await uow.lockStreams([streamId]);
    const totals = await uow.assetTotals(asset);
    const events = reconcile(totals, custody, chain, this.now());
    if (events.length > 0) {
      const { version } = await uow.readStream(streamId);
      await uow.appendToStream(streamId, version, events, meta);
    }
    return events;
  }

  /**
   * One decision: lock the stream, fold it, build the command (null: nothing to do), decide, apply
   * the transfers the new events stand for, append them. Atomic with the caller's unit of work.
   */
  async step<C, E extends DomainEvent, S>(
    uow: UnitOfWork,
    streamId: string,
    decider: Decider<C, E, S>,
    effects: Effects<S, E>,
    meta: EventMeta,
    build: (state: S) => NoInfer<C> | null | Promise<NoInfer<C> | null>,
  ): Promise<Step<S, E>> {
    await uow.lockStreams([streamId]);
    const { version, events: history } = await uow.readStream(streamId);
    const state = foldEvents(decider, history as E[]);
    const command = await build(state);
    if (command === null) return { state, events: [] };
    const decided = decider.decide(command, state);
    if (decided.length === 0) return { state, events: [] };
    let next = state;
    const transfers: Transfer[] = [];
    for (const event of decided) {
      transfers.push(...effects(next, event));
      next = decider.evolve(next, event);
    }
    if (transfers.length > 0) await uow.applyTransfers(transfers);
    await uow.appendToStream(streamId, version, decided, meta);
    return { state: next, events: decided };
  }
}

const termsView = (subnet: SubnetState): SubnetTermsView | null =>
  subnet.exists
    ? {
        subnetId: subnet.subnetId,
        asset: subnet.asset,
        version: subnet.version,
        parameters: subnet.parameters,
      }
    : null;
