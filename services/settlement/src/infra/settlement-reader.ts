import {
  type AccountStatementQuery,
  foldEvents,
  type JobStatementQuery,
  type QueryResponse,
  type SettlementBalancesQuery,
  streamIdOf,
  type SubnetEconomicsQuery,
} from '@gpunet/contracts';
import type { Database, PostgresEventStore } from '@gpunet/eventing';
import { type JobSettlementEvent, jobSettlementDecider } from '../domain/job/job-settlement.decider';
import type { Account, RecordedTransfer } from '../domain/ledger/ledger';
import { toWire } from '../domain/money';
import {
  type Proposal,
  type SubnetEvent,
  subnetDecider,
  type SubnetState,
} from '../domain/subnet/subnet.decider';
import { delegationsTo } from '../domain/subnet/subnet-rules';
import { delegationKey } from '../domain/subnet/subnet-state';
import { stakesOf } from '../domain/subnet/subnet-views';
import type { PostgresLedger, Sql } from './postgres-ledger';

type Balances = QueryResponse<typeof SettlementBalancesQuery>;
type Statement = QueryResponse<typeof AccountStatementQuery>;
type JobStatement = QueryResponse<typeof JobStatementQuery>;
type SubnetEconomics = QueryResponse<typeof SubnetEconomicsQuery>;
type SubnetHealth = NonNullable<SubnetEconomics['health']>;

/** What the subnet's `job.settled` events add up to (Postgres numerics as text). */
interface SettledFigures {
  readonly jobs: string;
  readonly paid: string;
  readonly fees: string;
  readonly gpu_seconds: string;
  readonly volume: string;
}

const balanceOf = (a: Account): Balances['accounts'][number] => {
  const debitNormal = a.flags.creditsMustNotExceedDebits;
  const balance = debitNormal ? a.debitsPosted - a.creditsPosted : a.creditsPosted - a.debitsPosted;
  const available = balance - (debitNormal ? a.creditsPending : a.debitsPending);
  return {
    accountId: a.id,
    asset: a.asset,
    purpose: a.purpose,
    ownerId: a.owner,
    debitsPending: toWire(a.debitsPending),
    debitsPosted: toWire(a.debitsPosted),
    creditsPending: toWire(a.creditsPending),
    creditsPosted: toWire(a.creditsPosted),
    balance: toWire(balance),
    available: toWire(available),
  };
};

const legOf = (t: RecordedTransfer): JobStatement['legs'][number] => ({
  transferId: t.id,
  sequence: t.sequence,
  kind: t.kind,
  code: t.code,
  debitAccountId: t.debitAccountId,
  creditAccountId: t.creditAccountId,
  amount: toWire(t.amount),
  pendingId: t.pendingId,
  jobId: t.jobId,
  at: t.at,
});

const proposalView = (p: Proposal): NonNullable<SubnetEconomics['proposals']>[number] => ({
  proposalId: p.proposalId,
  proposerId: p.proposerId,
  title: p.title,
  kind: p.change.kind,
  slashId: p.change.kind === 'overturn-slash' ? p.change.slashId : null,
  decidedBy: p.decidedBy,
  status: p.status,
  reason: p.decision?.reason ?? null,
  yes: p.decision?.yes ?? tallyOf(p, 'yes'),
  no: p.decision?.no ?? tallyOf(p, 'no'),
  abstain: p.decision?.abstain ?? tallyOf(p, 'abstain'),
  electorate: toWire(p.electorate),
  votingEndsAt: p.votingEndsAt,
  takesEffectAt: p.decision?.takesEffectAt ?? null,
  appliedVersion: p.appliedVersion,
});

/** The votes counted so far for `choice` (an open proposal's running tally). */
const tallyOf = (p: Proposal, choice: 'yes' | 'no' | 'abstain'): string =>
  toWire([...p.votes.values()].filter((v) => v.choice === choice).reduce((t, v) => t + v.weight, 0n));

const sum = (transfers: readonly RecordedTransfer[], where: (t: RecordedTransfer) => boolean): bigint =>
  transfers.filter(where).reduce((s, t) => s + t.amount, 0n);

/** Answers settlement's queries from the ledger tables and the event store. */
export class SettlementReader {
  constructor(
    private readonly db: Database,
    private readonly store: PostgresEventStore,
    private readonly ledger: PostgresLedger,
  ) {}

  async balances(request: { ownerId?: string; accountIds?: string[]; asset?: string }): Promise<Balances> {
    const accounts = await this.ledger.accounts(this.db, {
      ...(request.accountIds ? { ids: request.accountIds } : {}),
      ...(request.ownerId ? { owner: request.ownerId } : {}),
      ...(request.asset ? { asset: request.asset } : {}),
    });
    return { accounts: accounts.map(balanceOf) };
  }

  async accountStatement(request: {
    accountId: string;
    afterSequence: number;
    limit: number;
  }): Promise<Statement> {
    const [account] = await this.ledger.accounts(this.db, { ids: [request.accountId] });
    const page = await this.ledger.transfers(this.db, {
      accountId: request.accountId,
      afterSequence: request.afterSequence,
      limit: request.limit + 1,
    });
    const entries = page.slice(0, request.limit).map((t) => ({
      ...legOf(t),
      direction: t.debitAccountId === request.accountId ? ('debit' as const) : ('credit' as const),
    }));
    return {
      account: account ? balanceOf(account) : null,
      entries,
      nextAfterSequence: page.length > request.limit ? entries.at(-1)!.sequence : null,
    };
  }

  /** A job's money and every ledger leg of it (escrow, accruals, posts, voids, refund, slashes). */
  async jobStatement(jobId: string): Promise<JobStatement> {
    const events = (await this.store.readStream(streamIdOf('job', jobId))).map(
      (e) => ({ type: e.type, data: e.data }) as JobSettlementEvent,
    );
    const state = foldEvents(jobSettlementDecider, events);
    const legs = await this.ledger.transfers(this.db, { jobId });
    const empty = {
      funded: '0',
      paidToProviders: '0',
      subnetFees: '0',
      platformFees: '0',
      refunded: '0',
      pending: '0',
      escrowBalance: '0',
    };
    if (state.status === 'unknown' || state.status === 'rejected') {
      const rejected = events.find((e) => e.type === 'escrow.rejected');
      return {
        jobId,
        status: state.status,
        tenantId: state.status === 'rejected' ? state.tenantId : null,
        subnetId: rejected?.type === 'escrow.rejected' ? rejected.data.subnetId : null,
        asset: rejected?.type === 'escrow.rejected' ? rejected.data.asset : null,
        ...empty,
        legs: legs.map(legOf),
      };
    }
    const escrow = `${state.asset}:escrow:${jobId}`;
    const fromEscrow = legs.filter((t) => t.debitAccountId === escrow);
    const posted = (code: RecordedTransfer['code']) =>
      sum(fromEscrow, (t) => t.code === code && (t.kind === 'posted' || t.kind === 'post-pending'));
    const resolved = new Set(fromEscrow.flatMap((t) => (t.pendingId ? [t.pendingId] : [])));
    const pending = sum(fromEscrow, (t) => t.kind === 'pending' && !resolved.has(t.id));
    const funded = sum(legs, (t) => t.code === 'escrow-fund');
    const paid = posted('usage-charge');
    const subnetFees = posted('fee-subnet');
    const platformFees = posted('fee-platform');
    const refunded = posted('refund');
    return {
      jobId,
      status: state.status,
      tenantId: state.tenantId,
      subnetId: state.subnetId,
      asset: state.asset,
      funded: toWire(funded),
      paidToProviders: toWire(paid),
      subnetFees: toWire(subnetFees),
      platformFees: toWire(platformFees),
      refunded: toWire(refunded),
      pending: toWire(pending),
      escrowBalance: toWire(funded - paid - subnetFees - platformFees - refunded),
      legs: legs.map(legOf),
    };
  }

  async subnetEconomics(subnetId: string): Promise<SubnetEconomics> {
    const events = (await this.store.readStream(streamIdOf('subnet', subnetId))).map(
      (e) => ({ type: e.type, data: e.data }) as SubnetEvent,
    );
    const state = foldEvents(subnetDecider, events);
    const rejection = events.findLast((e) => e.type === 'subnet.request-rejected');
    const lastRejection =
      rejection?.type === 'subnet.request-rejected'
        ? {
            request: rejection.data.request,
            requesterId: rejection.data.requesterId,
            reason: rejection.data.reason,
            message: rejection.data.message,
            rejectedAt: rejection.data.rejectedAt,
          }
        : null;
    if (!state.exists) {
      return {
        subnetId,
        exists: false,
        ownerId: null,
        asset: null,
        version: 0,
        parameters: null,
        ownerStake: '0',
        treasury: '0',
        providers: [],
        totalProviderStake: '0',
        jobsSettled: 0,
        paidToProviders: '0',
        subnetFees: '0',
        lastRejection,
      };
    }
    const treasury = await this.ledger.accounts(this.db, { owner: subnetId, asset: state.asset });
    const treasuryBalance = treasury
      .filter((a) => a.purpose === 'treasury')
      .reduce((s, a) => s + a.creditsPosted - a.debitsPosted, 0n);
    // One scan of the subnet's settled jobs for the economics and their health figures.
    const [settled] = await this.db.query<SettledFigures>(
      `SELECT count(*)::text AS jobs,
              coalesce(sum((data->>'paidToProviders')::numeric), 0)::text AS paid,
              coalesce(sum((data->>'subnetFees')::numeric), 0)::text AS fees,
              coalesce(sum((SELECT sum((p->>'gpuSecondsBilled')::numeric)
                              FROM jsonb_array_elements(data->'providers') p)), 0)::text AS gpu_seconds,
              coalesce(sum((data->>'paidToProviders')::numeric + (data->>'subnetFees')::numeric
                           + (data->>'platformFees')::numeric), 0)::text AS volume
         FROM "${this.db.schema}".events
        WHERE type = 'job.settled' AND data->>'subnetId' = $1`,
      [subnetId],
    );
    const providers = [...state.members.values()].sort((a, b) => (a.providerId < b.providerId ? -1 : 1));
    const rewards = await this.rewardShares(subnetId);
    const delegations = [...state.delegations.values()].sort((a, b) =>
      a.providerId === b.providerId
        ? a.delegatorId < b.delegatorId
          ? -1
          : 1
        : a.providerId < b.providerId
          ? -1
          : 1,
    );
    return {
      subnetId,
      exists: true,
      ownerId: state.ownerId,
      asset: state.asset,
      version: state.version,
      parameters: state.parameters,
      ownerStake: toWire(state.ownerStake),
      treasury: toWire(treasuryBalance),
      providers: providers.map((m) => ({
        providerId: m.providerId,
        stake: toWire(m.stake),
        status: m.status,
        unbondsAt: m.unbondsAt,
        slashed: toWire(m.slashed),
        // As last announced (a jail that ended shows until the next chain pass says so).
        ...(m.standing ? { standing: m.standing } : {}),
        jailedUntil: m.jailedUntil,
        delegated: toWire(delegationsTo(state, m.providerId).reduce((t, d) => t + d.amount, 0n)),
      })),
      totalProviderStake: toWire(providers.reduce((s, m) => s + m.stake, 0n)),
      jobsSettled: Number(settled?.jobs ?? 0),
      paidToProviders: settled?.paid ?? '0',
      subnetFees: settled?.fees ?? '0',
      lastRejection,
      proposals: [...state.proposals.values()].reverse().slice(0, 50).map(proposalView),
      delegations: delegations.map((d) => ({
        delegatorId: d.delegatorId,
        providerId: d.providerId,
        amount: toWire(d.amount),
        status: d.status,
        unbondsAt: d.unbondsAt,
        slashed: toWire(d.slashed),
        rewards: toWire(rewards.get(delegationKey(d.delegatorId, d.providerId)) ?? 0n),
      })),
      slashes: [...state.slashes.values()]
        .reverse()
        .slice(0, 50)
        .map((x) => ({
          slashId: x.slashId,
          providerId: x.providerId,
          evidence: x.evidence,
          amount: toWire(x.amount),
          shares: x.shares,
          destination: x.destination,
          beneficiaryId: x.beneficiaryId,
          status: x.status,
          appealUntil: x.appealUntil,
          jailedUntil: x.jailedUntil,
          appealProposalId: x.appealProposalId,
        })),
      health: await this.subnetHealth(state, settled),
    };
  }

  // ------------------------------------------------------------------------------------------
  // A subnet's health: its members, settled activity, stake, and the slashes taken from it.

  private async subnetHealth(
    state: Extract<SubnetState, { exists: true }>,
    settled: SettledFigures | undefined,
  ): Promise<SubnetHealth> {
    const members = [...state.members.values()];
    const active = members.filter((m) => m.status === 'active');
    // Settlement's word on standing: the last one announced.
    const inGoodStanding = active.filter((m) => m.standing === 'good');
    let own = 0n;
    let delegated = 0n;
    for (const m of members) {
      const stakes = stakesOf(state, m.providerId);
      own += stakes.own;
      delegated += stakes.delegations.reduce((sum, d) => sum + d.amount, 0n);
    }
    const schema = this.db.schema;
    // Slashes taken (posted, or held and then posted) from any stake in the subnet — the owner's,
    // a provider's, a delegation's (`<staker>@<subnet>[@<provider>]`) — by where they went.
    const slashed = await this.db.query<{ purpose: string; amount: string }>(
      `SELECT split_part(t.credit_account_id, ':', 2) AS purpose, sum(t.amount)::text AS amount
         FROM "${schema}".ledger_transfers t
        WHERE t.code = 'slash' AND t.kind IN ('posted', 'post-pending')
          AND t.debit_account_id IN (SELECT a.id FROM "${schema}".ledger_accounts a
                                      WHERE a.asset = $2 AND a.purpose = 'stake'
                                        AND split_part(a.owner, '@', 2) = $1)
        GROUP BY 1`,
      [state.subnetId, state.asset],
    );
    const to = (purpose: string): string => slashed.find((r) => r.purpose === purpose)?.amount ?? '0';
    return {
      activeProviders: active.length,
      providersInGoodStanding: inGoodStanding.length,
      gpuSecondsSettled: Number(settled?.gpu_seconds ?? 0),
      volume: settled?.volume ?? '0',
      totalStake: toWire(state.ownerStake + own + delegated),
      delegatedStake: toWire(delegated),
      slashedToTreasury: to('treasury'),
      slashedBurned: to('burn'),
      slashedRefunded: to('wallet'),
    };
  }

  /** Withdrawals held and not yet resolved: the chain watcher submits and polls them. */
  async openWithdrawals(): Promise<
    { withdrawalId: string; asset: string; amount: bigint; destination: string }[]
  > {
    const rows = await this.db.query<{
      data: { withdrawalId: string; asset: string; amount: string; destination: string };
    }>(
      `SELECT e.data FROM "${this.db.schema}".events e
        WHERE e.type = 'withdrawal.held'
          AND NOT EXISTS (SELECT 1 FROM "${this.db.schema}".events r
                           WHERE r.stream_id = e.stream_id AND r.type IN ('withdrawal.completed', 'withdrawal.failed'))
        ORDER BY e.global_position`,
    );
    return rows.map(({ data }) => ({ ...data, amount: BigInt(data.amount) }));
  }

  /** Every subnet that exists: the chain pass steps each. */
  async subnetIds(): Promise<string[]> {
    const rows = await this.db.query<{ subnet_id: string }>(
      `SELECT data->>'subnetId' AS subnet_id FROM "${this.db.schema}".events
        WHERE type = 'subnet.created' ORDER BY global_position`,
    );
    return rows.map((r) => r.subnet_id);
  }

  /**
   * The subnets `providerId` ever joined (as `sql` sees the log): evidence against it is proposed
   * in each, and the subnet's decision ignores it where it is no member any more (released).
   */
  async subnetsJoinedBy(providerId: string, sql: Sql = this.db): Promise<string[]> {
    const rows = await sql.query<{ subnet_id: string }>(
      `SELECT DISTINCT data->>'subnetId' AS subnet_id FROM "${this.db.schema}".events
        WHERE type = 'subnet.provider-joined' AND data->>'providerId' = $1 ORDER BY 1`,
      [providerId],
    );
    return rows.map((r) => r.subnet_id);
  }

  /** Posted `reward-share` transfers of the subnet's jobs, by `<delegator>/<provider>`. */
  private async rewardShares(subnetId: string): Promise<Map<string, bigint>> {
    const rows = await this.db.query<{ id: string; amount: string }>(
      `SELECT t.id, t.amount::text AS amount FROM "${this.db.schema}".ledger_transfers t
        WHERE t.code = 'reward-share' AND t.kind IN ('posted', 'post-pending')
          AND t.job_id IN (SELECT data->>'jobId' FROM "${this.db.schema}".events
                            WHERE type = 'job.funded' AND data->>'subnetId' = $1)`,
      [subnetId],
    );
    const rewards = new Map<string, bigint>();
    for (const { id, amount } of rows) {
      // reward-share:<job>:<provider>:<delegator>; entity ids hold no ':'.
      const [, , providerId, delegatorId] = id.split(':');
      if (providerId === undefined || delegatorId === undefined) continue;
      const key = delegationKey(delegatorId, providerId);
      rewards.set(key, (rewards.get(key) ?? 0n) + BigInt(amount));
    }
    return rewards;
  }
}
