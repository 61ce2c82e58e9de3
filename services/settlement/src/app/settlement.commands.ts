import { createHash } from 'node:crypto';
import {
  type Causation,
  type Decider,
  type DomainEvent,
  type JobCompleted,
  type JobSubmitted,
  type PayloadOf,
  type SlashEvidence,
  type SlashingPolicy,
  streamIdOf,
  type SubnetCreateRequested,
  type SubnetDelegationRequested,
  type SubnetJoinRequested,
  type SubnetLeaveRequested,
  type SubnetParametersUpdateRequested,
  type SubnetProposalRequested,
  type SubnetUndelegationRequested,
  type SubnetVoteRequested,
  type UsageDisputed,
  type UsageReported,
  type WithdrawalRequested,
} from '@gpunet/contracts';
import {
  type CommandHandler,
  type CommandInput,
  type CommandMetadata,
  type Decision,
  EVENTING,
  type EventingRuntime,
  type HandledCommand,
  type Tx,
} from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import { chainClearingOf, delegationOf, escrowOf, stakeOf, walletOf } from '../domain/accounts';
import {
  type JobSettlementCommand,
  jobSettlementDecider,
  JobNotKnownYetError,
  type JobSettlementEvent,
  type JobSettlementState,
  type ProviderFault,
  type SubnetTermsView,
} from '../domain/job/job-settlement.decider';
import { jobTransfers } from '../domain/job/job-settlement.effects';
import type { StakeHolders } from '../domain/job/reward-shares';
import { availableOf, type Transfer, ZERO_BALANCES } from '../domain/ledger/transfer';
import { minor } from '../domain/money';
import {
  type Reconcile,
  reconciliationDecider,
  type ReconciliationEvent,
  type ReconciliationState,
} from '../domain/reconciliation';
import {
  type SubnetCommand,
  subnetDecider,
  type SubnetEvent,
  type SubnetState,
} from '../domain/subnet/subnet.decider';
import { subnetTransfers } from '../domain/subnet/subnet.effects';
import { isBillableMember, stakesOf } from '../domain/subnet/subnet-views';
import {
  depositDecider,
  type DepositEvent,
  type DepositState,
  depositTransfers,
  type RecordDeposit,
} from '../domain/wallet/deposit.decider';
import {
  type WithdrawalCommand,
  withdrawalDecider,
  type WithdrawalEvent,
  withdrawalSourceOf,
  type WithdrawalState,
  withdrawalTransfers,
} from '../domain/wallet/withdrawal.decider';
import { PostgresLedger } from '../infra/postgres-ledger';
import type { SettlementConfig } from './settlement.config';
import { SETTLEMENT_CONFIG } from './settlement.tokens';

type JobDecision = HandledCommand<JobSettlementEvent, JobSettlementState>;
type SubnetDecision = HandledCommand<SubnetEvent, SubnetState>;
type WithdrawalDecision = HandledCommand<WithdrawalEvent, WithdrawalState>;

/** How a job ended, as execution reports it. */
export interface JobEnd {
  readonly jobId: string;
  readonly outcome: 'completed' | 'failed' | 'cancelled';
  /** Final cumulative readings. */
  readonly usage: PayloadOf<typeof JobCompleted>['usage'];
  readonly faults: readonly ProviderFault[];
}

/** What the chain decided about a withdrawal it was sent. */
export type WithdrawalOutcome =
  | { readonly confirmed: true; readonly chainTxId: string }
  | { readonly confirmed: false; readonly reason: string };

/**
 * The ledger transfers a decision's events stand for (each from the state before it), applied in the
 * decision's transaction: the ledger refuses what breaks a balance rule, and then nothing of the
 * decision is kept.
 */
const ledgerEffects =
  <C, E extends DomainEvent, S>(
    ledger: PostgresLedger,
    decider: Decider<C, E, S>,
    transfersOf: (state: S, event: E) => Transfer[],
  ) =>
  async ({ tx, before, events }: Decision<C, E, S>): Promise<void> => {
    const transfers: Transfer[] = [];
    let state = before;
    for (const event of events) {
      transfers.push(...transfersOf(state, event));
      state = decider.evolve(state, event);
    }
    await ledger.apply(tx, transfers);
  };

/** A serial decision's transaction: `CommandHandler` always opens one for it. */
const locked = (tx: Tx | undefined): Tx => {
  if (!tx) throw new Error('a settlement decision runs in a transaction');
  return tx;
};

/**
 * Settlement's decisions, each through the one write path (`CommandHandler`): one handler per
 * aggregate (job settlement, subnet, deposit, withdrawal, reconciliation), serial — a decision takes
 * its stream's lock first, so fifty usage reports of one job queue instead of conflicting — with the
 * command built from the state and the balances it needs read under the accounts' locks, in the
 * same transaction, and the events' ledger transfers applied with the append.
 *
 * What a consumed message causes is decided in the consumer's transaction (`tx`) and carries its
 * causation; the chain watcher's decisions run in transactions of their own.
 */
@Injectable()
export class SettlementCommands {
  private readonly jobs: CommandHandler<JobSettlementCommand, JobSettlementEvent, JobSettlementState>;
  private readonly subnets: CommandHandler<SubnetCommand, SubnetEvent, SubnetState>;
  private readonly deposits: CommandHandler<RecordDeposit, DepositEvent, DepositState>;
  private readonly withdrawals: CommandHandler<WithdrawalCommand, WithdrawalEvent, WithdrawalState>;
  private readonly reconciliations: CommandHandler<Reconcile, ReconciliationEvent, ReconciliationState>;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(SETTLEMENT_CONFIG) private readonly config: SettlementConfig,
    @Inject(PostgresLedger) private readonly ledger: PostgresLedger,
  ) {
    const serial = <C, E extends DomainEvent, S>(
      decider: Decider<C, E, S>,
      transfersOf?: (state: S, event: E) => Transfer[],
    ): CommandHandler<C, E, S> =>
      eventing.commandHandler({
        decider,
        concurrency: 'serial',
        ...(transfersOf ? { effects: ledgerEffects(ledger, decider, transfersOf) } : {}),
      });
    this.jobs = serial(jobSettlementDecider, jobTransfers);
    this.subnets = serial(subnetDecider, subnetTransfers);
    this.deposits = serial(depositDecider, depositTransfers);
    this.withdrawals = serial(withdrawalDecider, withdrawalTransfers);
    this.reconciliations = serial(reconciliationDecider);
  }

  private now(): string {
    return this.eventing.clock.now().toISOString();
  }

  /** Locks `accounts` (in id order) and returns the available balance of the first. */
  private async available(tx: Tx | undefined, ...accounts: [string, ...string[]]): Promise<bigint> {
    const balances = await this.ledger.lockAccounts(locked(tx), accounts);
    return availableOf(balances.get(accounts[0]) ?? ZERO_BALANCES);
  }

  /** A decision on the job's stream. */
  private job(
    jobId: string,
    command: CommandInput<JobSettlementCommand, JobSettlementState>,
    cause: CommandMetadata,
    tx?: Tx,
  ): Promise<JobDecision> {
    return this.jobs.handle(streamIdOf('job', jobId), command, cause, tx);
  }

  /** A decision on the subnet's stream. */
  private subnet(
    subnetId: string,
    command: CommandInput<SubnetCommand, SubnetState>,
    cause: CommandMetadata,
    tx?: Tx,
  ): Promise<SubnetDecision> {
    return this.subnets.handle(streamIdOf('subnet', subnetId), command, cause, tx);
  }

  /** Escrow at submission: `job.funded`, or `escrow.rejected` and the job is never scheduled. */
  async fundJob(job: PayloadOf<typeof JobSubmitted>, cause: Causation, tx: Tx): Promise<JobDecision> {
    // The subnet is read without its lock: a parameters update racing with funding applies to one
    // side of it or the other, and both are valid versions.
    const { state: subnet } = await this.subnets.load(streamIdOf('subnet', job.subnetId), tx);
    const { platformFeeBps, lowEscrowBps } = this.config.economy;
    return this.job(
      job.jobId,
      async (state, t) =>
        state.status !== 'unknown'
          ? null
          : {
              type: 'FundJob',
              job,
              subnet: termsView(subnet),
              available: await this.available(
                t,
                walletOf(job.asset, job.tenantId),
                escrowOf(job.asset, job.jobId),
              ),
              platformFeeBps,
              lowEscrowBps,
              at: this.now(),
            },
      cause,
      tx,
    );
  }

  /**
   * The job's subnet as it is now, for a funded job (else nothing to read). Read without the
   * subnet's lock, like funding: a join or leave racing with a metering applies to one side of it.
   */
  private async subnetOfJob(job: JobSettlementState, tx: Tx | undefined): Promise<SubnetState> {
    if (job.status !== 'funded') return subnetDecider.initialState;
    return (await this.subnets.load(streamIdOf('subnet', job.subnetId), tx)).state;
  }

  /**
   * Accrues a usage report as pending transfers (`usage.metered`, maybe `escrow.low`/`exhausted`),
   * for the providers that are billable members of the job's subnet when it is metered.
   */
  meterUsage(report: PayloadOf<typeof UsageReported>, cause: Causation, tx: Tx): Promise<JobDecision> {
    const { jobId, seq, providers } = report;
    return this.job(
      jobId,
      async (state, t) => {
        const subnet = await this.subnetOfJob(state, t);
        return {
          type: 'MeterUsage',
          jobId,
          seq,
          providers,
          billable: billableOf(subnet, providers),
          at: this.now(),
        };
      },
      cause,
      tx,
    );
  }

  /**
   * Pays the billable members (each sharing its pay with its delegators, pro rata to stake now),
   * refunds the rest, and proposes a slash of each verified fault the job's pinned table prices.
   */
  async settleJob(end: JobEnd, cause: Causation, tx: Tx): Promise<JobDecision> {
    const settled = await this.job(
      end.jobId,
      async (state, t) => {
        const subnet = await this.subnetOfJob(state, t);
        const paid = new Set([
          ...(state.status === 'funded' ? state.providers.keys() : []),
          ...end.usage.map((u) => u.providerId),
        ]);
        const stakes = new Map<string, StakeHolders>([...paid].sort().map((p) => [p, stakesOf(subnet, p)]));
        return {
          type: 'SettleJob',
          ...end,
          billable: billableOf(subnet, end.usage),
          stakes,
          at: this.now(),
        };
      },
      cause,
      tx,
    );
    const { state } = settled;
    if (state.status !== 'settled' || !settled.domainEvents.some((e) => e.type === 'job.settled'))
      return settled;
    for (const { providerId, kind, verified, detail } of end.faults) {
      const bps = state.terms.slashing[kind] ?? 0;
      if (!verified || bps === 0) continue;
      await this.proposeSlash(
        state.subnetId,
        {
          providerId,
          evidence: {
            kind,
            source: 'job-fault',
            jobId: end.jobId,
            reference: end.jobId,
            detail: detail ?? `verified ${kind} in job ${end.jobId}`,
          },
          bps,
          policy: state.terms.slashingPolicy,
          beneficiaryId: state.tenantId,
        },
        cause,
        tx,
      );
    }
    return settled;
  }

  /**
   * Execution found a provider's signed usage above what it observed (and paid the observed figure):
   * a `usage-disputed` slash in the job's subnet, by the job's pinned table and policy, for the
   * job's tenant. Nothing when the table does not price the kind. A dispute of a job settlement has
   * not funded yet waits for it (`JOB_NOT_KNOWN_YET`, retried).
   */
  async disputeUsage(
    dispute: PayloadOf<typeof UsageDisputed>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision | null> {
    const { state } = await this.jobs.load(streamIdOf('job', dispute.jobId), tx);
    if (state.status === 'unknown') throw new JobNotKnownYetError(dispute.jobId);
    if (state.status === 'rejected') return null; // never ran: nothing it could have overclaimed
    const bps = state.terms.slashing['usage-disputed'] ?? 0;
    if (bps === 0) return null;
    const { jobId, providerId, attempt, rank } = dispute;
    return this.proposeSlash(
      state.subnetId,
      {
        providerId,
        evidence: {
          kind: 'usage-disputed',
          source: 'usage-dispute',
          jobId,
          reference: `${jobId}/${attempt}/${rank}`,
          detail: `rank ${rank} (attempt ${attempt}): the edge signed ${dispute.edgeSeconds} s, execution observed ${dispute.observedSeconds} s`,
        },
        bps,
        policy: state.terms.slashingPolicy,
        beneficiaryId: state.tenantId,
      },
      cause,
      tx,
    );
  }

  /**
   * Evidence against a provider in one subnet: a slash by the subnet's rules (ADR 0071), held for
   * the appeal window (or taken at once), its id derived from the evidence so evidence seen twice
   * slashes once. `bps` and `policy` are the job's pinned terms for a job's fault, else null (the
   * subnet's current ones); a kind the table does not name, or names at 0, slashes nothing, and so
   * does evidence against a provider that is no member (or is released).
   */
  proposeSlash(
    subnetId: string,
    slash: {
      readonly providerId: string;
      readonly evidence: SlashEvidence;
      readonly bps: number | null;
      readonly policy: SlashingPolicy | null;
      readonly beneficiaryId: string | null;
    },
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    return this.subnet(
      subnetId,
      (state) => {
        if (!state.exists) return null;
        const bps = slash.bps ?? state.parameters.slashing[slash.evidence.kind] ?? 0;
        if (bps === 0) return null;
        return {
          type: 'ProposeSlash',
          slashId: slashIdOf(subnetId, slash.providerId, slash.evidence),
          providerId: slash.providerId,
          evidence: slash.evidence,
          bps,
          policy: slash.policy ?? state.parameters.slashingPolicy,
          beneficiaryId: slash.beneficiaryId,
          at: this.now(),
        };
      },
      cause,
      tx,
    );
  }

  /** The tenant of a job settlement knows of (null: none funded or refused). */
  async tenantOf(jobId: string, tx: Tx): Promise<string | null> {
    const { state } = await this.jobs.load(streamIdOf('job', jobId), tx);
    return state.status === 'unknown' ? null : state.tenantId;
  }

  /** Opens a proposal (a parameters change in a stake-vote subnet, or an appeal), or rejects it. */
  propose(
    request: PayloadOf<typeof SubnetProposalRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    return this.subnet(
      request.subnetId,
      { type: 'Propose', request, testAssets: this.config.economy.testAssets, at: this.now() },
      cause,
      tx,
    );
  }

  /** Counts a vote with the voter's stake now (a later vote replaces it), or rejects it. */
  vote(request: PayloadOf<typeof SubnetVoteRequested>, cause: Causation, tx: Tx): Promise<SubnetDecision> {
    return this.subnet(request.subnetId, { type: 'Vote', request, at: this.now() }, cause, tx);
  }

  /** Locks stake from the delegator's wallet into its delegation to a provider, or rejects it. */
  delegate(
    request: PayloadOf<typeof SubnetDelegationRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    const { subnetId, delegatorId, providerId } = request;
    return this.subnet(
      subnetId,
      async (state, t) => ({
        type: 'Delegate',
        request,
        available: state.exists
          ? await this.available(
              t,
              walletOf(state.asset, delegatorId),
              delegationOf(state.asset, delegatorId, subnetId, providerId),
            )
          : 0n,
        at: this.now(),
      }),
      cause,
      tx,
    );
  }

  /** A delegation unbonds (still slashable until it is released). */
  undelegate(
    request: PayloadOf<typeof SubnetUndelegationRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    return this.subnet(request.subnetId, { type: 'Undelegate', request, at: this.now() }, cause, tx);
  }

  /** Creates a subnet, locking its owner's stake (or rejects the request, saying why). */
  createSubnet(
    request: PayloadOf<typeof SubnetCreateRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    const { subnetId, ownerId, asset } = request;
    return this.subnet(
      subnetId,
      // An existing subnet refuses the request whatever the wallet holds: nothing to lock.
      async (state, t) =>
        state.exists
          ? {
              type: 'CreateSubnet',
              request,
              available: 0n,
              minCreationStake: 0n,
              testAssets: this.config.economy.testAssets,
              at: this.now(),
            }
          : {
              type: 'CreateSubnet',
              request,
              available: await this.available(t, walletOf(asset, ownerId), stakeOf(asset, ownerId, subnetId)),
              minCreationStake: this.config.economy.minSubnetCreationStake,
              testAssets: this.config.economy.testAssets,
              at: this.now(),
            },
      cause,
      tx,
    );
  }

  /** A new version of the subnet's parameters (jobs keep the version they were funded under). */
  updateSubnetParameters(
    { subnetId, ownerId, parameters }: PayloadOf<typeof SubnetParametersUpdateRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    return this.subnet(
      subnetId,
      {
        type: 'UpdateParameters',
        subnetId,
        ownerId,
        parameters,
        testAssets: this.config.economy.testAssets,
        at: this.now(),
      },
      cause,
      tx,
    );
  }

  /** Lets a provider into a subnet, locking its stake from its wallet. */
  joinSubnet(
    { subnetId, providerId, stake }: PayloadOf<typeof SubnetJoinRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    const wallet = async (state: SubnetState, t: Tx | undefined): Promise<bigint> =>
      state.exists
        ? this.available(t, walletOf(state.asset, providerId), stakeOf(state.asset, providerId, subnetId))
        : 0n;
    return this.subnet(
      subnetId,
      async (state, t) => ({
        type: 'JoinSubnet',
        subnetId,
        providerId,
        stake: minor(stake),
        available: await wallet(state, t),
        at: this.now(),
      }),
      cause,
      tx,
    );
  }

  /** A provider leaves: its stake unbonds (and can still be slashed until it is released). */
  leaveSubnet(
    { subnetId, providerId }: PayloadOf<typeof SubnetLeaveRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<SubnetDecision> {
    return this.subnet(subnetId, { type: 'LeaveSubnet', subnetId, providerId, at: this.now() }, cause, tx);
  }

  /** Holds a withdrawal's amount while the chain sends it (or rejects what the account cannot cover). */
  requestWithdrawal(
    request: PayloadOf<typeof WithdrawalRequested>,
    cause: Causation,
    tx: Tx,
  ): Promise<WithdrawalDecision> {
    const source = withdrawalSourceOf(request);
    return this.withdrawals.handle(
      streamIdOf('withdrawal', request.withdrawalId),
      async (_state, t) => ({
        type: 'RequestWithdrawal',
        request,
        available: await this.available(t, source, chainClearingOf(request.asset)),
        at: this.now(),
      }),
      cause,
      tx,
    );
  }

  /** Credits a deposit the chain adapter confirmed (at most once per deposit id). */
  recordDeposit(
    deposit: RecordDeposit['deposit'],
    cause: Causation,
    tx?: Tx,
  ): Promise<HandledCommand<DepositEvent, DepositState>> {
    return this.deposits.handle(
      streamIdOf('deposit', deposit.asset, deposit.depositId),
      { type: 'RecordDeposit', deposit },
      cause,
      tx,
    );
  }

  /**
   * The chain confirmed (or refused) a withdrawal: post (or void) its hold. A reply on the
   * withdrawal's stream: it keeps the withdrawal's correlation.
   */
  resolveWithdrawal(withdrawalId: string, outcome: WithdrawalOutcome, tx?: Tx): Promise<WithdrawalDecision> {
    const at = this.now();
    return this.withdrawals.handle(
      streamIdOf('withdrawal', withdrawalId),
      outcome.confirmed
        ? { type: 'CompleteWithdrawal', chainTxId: outcome.chainTxId, at }
        : { type: 'FailWithdrawal', reason: outcome.reason, at },
      {},
      tx,
    );
  }

  /**
   * The subnet's time-driven steps due now: close votes, apply passed changes, take held slashes,
   * release unbonded stake and delegations, announce standings that changed (a jail that ended).
   */
  stepSubnet(subnetId: string, tx?: Tx): Promise<SubnetDecision> {
    return this.subnet(subnetId, { type: 'Tick', at: this.now() }, {}, tx);
  }

  /**
   * Checks one asset's ledger (summed under the reconciliation stream's lock) and custody; a
   * mismatch event for anything that does not add up.
   */
  async reconcile(
    asset: string,
    custody: bigint | null,
    chain: string,
    cause: Causation,
    tx?: Tx,
  ): Promise<ReconciliationEvent[]> {
    const { domainEvents } = await this.reconciliations.handle(
      streamIdOf('reconciliation', asset),
      async (_state, t) => ({
        type: 'Reconcile',
        totals: await this.ledger.totals(locked(t), asset),
        custody,
        chain,
        at: this.now(),
      }),
      cause,
      tx,
    );
    return [...domainEvents];
  }
}

/** A slash's id: `slash-` + the first 32 hex digits of sha256 of `<subnet>|<provider>|<kind>|<reference>`. */
export const slashIdOf = (subnetId: string, providerId: string, evidence: SlashEvidence): string =>
  `slash-${createHash('sha256')
    .update(`${subnetId}|${providerId}|${evidence.kind}|${evidence.reference}`)
    .digest('hex')
    .slice(0, 32)}`;

/** Which of the providers of a reading are billable members of the subnet now. */
const billableOf = (subnet: SubnetState, usage: readonly { readonly providerId: string }[]): string[] =>
  [...new Set(usage.map((u) => u.providerId))].filter((p) => isBillableMember(subnet, p)).sort();

const termsView = (subnet: SubnetState): SubnetTermsView | null =>
  subnet.exists
    ? {
        subnetId: subnet.subnetId,
        asset: subnet.asset,
        version: subnet.version,
        parameters: subnet.parameters,
      }
    : null;
