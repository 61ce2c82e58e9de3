import type {
  Envelope,
  JobStatementQuery,
  MemberStanding,
  PayloadOf,
  PlacementExplanationRecord,
  ProposalChange,
  QueryResponse,
  SlashShare,
  SubnetEconomicsQuery,
  SubnetMemberStandingChanged,
  SubnetParametersUpdated,
  SubnetProposalDecided,
  SubnetProposalOpened,
  SubnetProviderSlashed,
  SubnetSlashProposed,
  SubnetVoteCast,
} from '@gpunet/contracts';
import { type EventCollector, waitFor } from '@gpunet/testing';
import { Client } from 'pg';
import type { SubnetParameters } from './dev-cluster';

/*
 * A subnet's members governing it through the REST gateway (ADR 0071), and the awaiters and checks a
 * cluster test needs around it: who proposes, who votes with what stake, what the chain pass decided,
 * which slash was held and then taken, and whether the ledger still adds up.
 */

/** What settlement shows of a subnet (`GET /v1/subnets/{id}`, `settlement.subnet-economics`). */
export type SubnetView = QueryResponse<typeof SubnetEconomicsQuery>;
export type JobStatement = QueryResponse<typeof JobStatementQuery>;
export type VoteChoice = 'yes' | 'no' | 'abstain';

/** A refused gateway request: its status and problem+json body. */
export class GatewayRequestError extends Error {
  override readonly name = 'GatewayRequestError';
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${method} ${path}: ${status} ${body.slice(0, 2000)}`);
  }
}

/** The gateway's answer to a request that starts a chain of events (`202 Accepted`). */
export interface Accepted {
  readonly requestId: string;
  readonly type: string;
  readonly status: 'accepted';
  readonly detail: string;
}

const json = (body: unknown): RequestInit => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * One caller of the gateway's REST API: an API key, and the tenant it acts as (a subnet's owner, a
 * provider under its edge id, a delegator, a tenant submitting jobs). Requests settlement decides
 * asynchronously answer 202; what settlement made of them is in its events and in `subnet()`.
 */
export class GatewayApi {
  constructor(
    readonly gatewayUrl: string,
    readonly apiKey: string,
    readonly tenantId: string,
  ) {}

  /** A new API key for `tenantId`, made with the gateway's admin key (`POST /v1/admin/api-keys`). */
  static async create(
    gatewayUrl: string,
    adminKey: string,
    tenantId: string,
    scopes: readonly ('read' | 'submit' | 'admin')[] = ['read', 'submit'],
  ): Promise<GatewayApi> {
    const res = await fetch(`${gatewayUrl}/v1/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId, scopes, name: `cluster ${tenantId}`.slice(0, 200) }),
    });
    if (!res.ok) throw new GatewayRequestError('POST', '/v1/admin/api-keys', res.status, await res.text());
    const { key } = (await res.json()) as { key: string };
    return new GatewayApi(gatewayUrl, key, tenantId);
  }

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.gatewayUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${this.apiKey}`, ...(init.headers as Record<string, string>) },
    });
  }

  /** A GET answered 200 with JSON, else a `GatewayRequestError`. */
  async get<T>(path: string): Promise<T> {
    const res = await this.fetch(path);
    if (res.status !== 200) throw new GatewayRequestError('GET', path, res.status, await res.text());
    return (await res.json()) as T;
  }

  /** A POST answered `status` (default 202) with JSON, else a `GatewayRequestError`. */
  async post<T = Accepted>(path: string, body: unknown, status = 202): Promise<T> {
    const res = await this.fetch(path, { method: 'POST', ...json(body) });
    if (res.status !== status) throw new GatewayRequestError('POST', path, res.status, await res.text());
    return (await res.json()) as T;
  }

  /** Money on the caller's wallet from settlement's simulated chain (`POST /v1/accounts/deposits`). */
  deposit(asset: string, amount: bigint): Promise<{ chainTxId: string; available: string }> {
    return this.post('/v1/accounts/deposits', { asset, amount: amount.toString() }, 201);
  }

  /** A subnet owned by the caller, its stake locked from the caller's wallet (`POST /v1/subnets`). */
  createSubnet(subnet: {
    subnetId: string;
    asset: string;
    stake: bigint;
    parameters: SubnetParameters;
  }): Promise<Accepted> {
    return this.post('/v1/subnets', { ...subnet, stake: subnet.stake.toString() });
  }

  /** The caller joins as a provider, locking `stake` (`POST /v1/subnets/{id}/join`). */
  join(subnetId: string, stake: bigint): Promise<Accepted> {
    return this.post(`/v1/subnets/${subnetId}/join`, { stake: stake.toString() });
  }

  /** The caller delegates `amount` more to a member provider (`POST /v1/subnets/{id}/delegations`). */
  delegate(subnetId: string, providerId: string, amount: bigint): Promise<Accepted> {
    return this.post(`/v1/subnets/${subnetId}/delegations`, { providerId, amount: amount.toString() });
  }

  /** A proposal by the caller, a member (`POST /v1/subnets/{id}/proposals`). */
  propose(
    subnetId: string,
    proposal: { proposalId: string; title: string; change: ProposalChange | ParametersChange },
  ): Promise<Accepted> {
    return this.post(`/v1/subnets/${subnetId}/proposals`, proposal);
  }

  /** The caller's vote, weighed by its stake when settlement counts it (`…/proposals/{pid}/votes`). */
  vote(subnetId: string, proposalId: string, choice: VoteChoice): Promise<Accepted> {
    return this.post(`/v1/subnets/${subnetId}/proposals/${proposalId}/votes`, { choice });
  }

  /** The owner's direct update, for an owner-governed subnet (`POST /v1/subnets/{id}/parameters`). */
  updateParameters(subnetId: string, parameters: SubnetParameters): Promise<Accepted> {
    return this.post(`/v1/subnets/${subnetId}/parameters`, { parameters });
  }

  /** The subnet with its members, proposals, delegations, slashes and health (`GET /v1/subnets/{id}`). */
  subnet(subnetId: string): Promise<SubnetView> {
    return this.get(`/v1/subnets/${subnetId}`);
  }

  /** Submits an ensemble spec (YAML); the job's id. */
  async submitJob(yaml: string): Promise<string> {
    const res = await this.fetch('/v1/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: yaml,
    });
    if (res.status !== 202) throw new GatewayRequestError('POST', '/v1/jobs', res.status, await res.text());
    return ((await res.json()) as { jobId: string }).jobId;
  }

  /** Asks the gateway to cancel the job (any 2xx: accepted, or cancelled at once). */
  async cancelJob(jobId: string): Promise<void> {
    const path = `/v1/jobs/${jobId}/cancel`;
    const res = await this.fetch(path, { method: 'POST', ...json({}) });
    if (!res.ok) throw new GatewayRequestError('POST', path, res.status, await res.text());
  }

  /** The scheduler's explanation of the job's last placement attempt (null before its first). */
  async explanation(jobId: string): Promise<PlacementExplanationRecord | null> {
    const path = `/v1/jobs/${jobId}/explanation`;
    const res = await this.fetch(path);
    if (res.status === 404) return null;
    if (res.status !== 200) throw new GatewayRequestError('GET', path, res.status, await res.text());
    return (await res.json()) as PlacementExplanationRecord;
  }

  /** Settlement's statement of the job's money (`GET /v1/jobs/{id}/statement`). */
  jobStatement(jobId: string): Promise<Omit<JobStatement, 'tenantId' | 'subnetId'>> {
    return this.get(`/v1/jobs/${jobId}/statement`);
  }
}

/** A whole new parameter set, as a member proposes it (input form: defaults not yet applied). */
export interface ParametersChange {
  readonly kind: 'parameters';
  readonly parameters: SubnetParameters;
}

const dataOf = <D>(e: Envelope): PayloadOf<D> => e.data as PayloadOf<D>;

/** Waits for settlement to show the subnet with every given provider an active member. */
export const awaitSubnet = (
  api: GatewayApi,
  subnetId: string,
  providerIds: readonly string[] = [],
  timeoutMs = 60_000,
): Promise<SubnetView> =>
  waitFor(
    async () => {
      const res = await api.fetch(`/v1/subnets/${subnetId}`);
      if (res.status !== 200) return undefined;
      const view = (await res.json()) as SubnetView;
      const active = new Set(view.providers.filter((p) => p.status === 'active').map((p) => p.providerId));
      return view.exists && providerIds.every((p) => active.has(p)) ? view : undefined;
    },
    {
      timeoutMs,
      intervalMs: 100,
      description: `subnet ${subnetId} with ${providerIds.length} active providers`,
    },
  );

/** Waits for a view of the subnet that satisfies `ready` (polled through the gateway). */
export const awaitSubnetView = (
  api: GatewayApi,
  subnetId: string,
  ready: (view: SubnetView) => boolean,
  description: string,
  timeoutMs = 30_000,
): Promise<SubnetView> =>
  waitFor(
    async () => {
      const view = await api.subnet(subnetId);
      return ready(view) ? view : undefined;
    },
    { timeoutMs, intervalMs: 100, description: `subnet ${subnetId}: ${description}` },
  );

const ofSubnet = (e: Envelope, type: string, subnetId: string): boolean =>
  e.type === type && (e.data as { subnetId?: string }).subnetId === subnetId;

/** `subnet.proposal-opened` of the proposal. */
export const awaitProposalOpened = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  proposalId: string,
  timeoutMs = 30_000,
): Promise<PayloadOf<typeof SubnetProposalOpened>> =>
  dataOf<typeof SubnetProposalOpened>(
    await events.waitFor(
      (e) =>
        ofSubnet(e, 'subnet.proposal-opened', subnetId) &&
        (e.data as { proposalId: string }).proposalId === proposalId,
      { timeoutMs, description: `proposal ${proposalId} opened in ${subnetId}` },
    ),
  );

/** `subnet.vote-cast` of the voter on the proposal (its first counted vote). */
export const awaitVoteCast = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  proposalId: string,
  voterId: string,
  timeoutMs = 30_000,
): Promise<PayloadOf<typeof SubnetVoteCast>> =>
  dataOf<typeof SubnetVoteCast>(
    await events.waitFor(
      (e) =>
        ofSubnet(e, 'subnet.vote-cast', subnetId) &&
        (e.data as { proposalId: string }).proposalId === proposalId &&
        (e.data as { voterId: string }).voterId === voterId,
      { timeoutMs, description: `${voterId}'s vote on ${proposalId} counted` },
    ),
  );

/**
 * Proposes `change` as `proposer`, waits for it to open, then every voter votes (through its own API
 * key) and each vote is counted. Returns the opened proposal and the votes as settlement counted them.
 */
export const proposeAndVote = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  proposer: GatewayApi,
  proposal: { proposalId: string; title: string; change: ProposalChange | ParametersChange },
  votes: readonly { readonly voter: GatewayApi; readonly choice: VoteChoice }[],
): Promise<{
  opened: PayloadOf<typeof SubnetProposalOpened>;
  cast: PayloadOf<typeof SubnetVoteCast>[];
}> => {
  await proposer.propose(subnetId, proposal);
  const opened = await awaitProposalOpened(events, subnetId, proposal.proposalId);
  await Promise.all(votes.map(({ voter, choice }) => voter.vote(subnetId, proposal.proposalId, choice)));
  const cast = await Promise.all(
    votes.map(({ voter }) => awaitVoteCast(events, subnetId, proposal.proposalId, voter.tenantId)),
  );
  return { opened, cast };
};

/** `subnet.proposal-decided` of the proposal (the chain pass after `votingEndsAt`). */
export const awaitProposalDecided = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  proposalId: string,
  timeoutMs = 60_000,
): Promise<PayloadOf<typeof SubnetProposalDecided>> =>
  dataOf<typeof SubnetProposalDecided>(
    await events.waitFor(
      (e) =>
        ofSubnet(e, 'subnet.proposal-decided', subnetId) &&
        (e.data as { proposalId: string }).proposalId === proposalId,
      { timeoutMs, description: `proposal ${proposalId} decided in ${subnetId}` },
    ),
  );

/** `subnet.parameters-updated` to `version`. */
export const awaitParametersVersion = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  version: number,
  timeoutMs = 30_000,
): Promise<PayloadOf<typeof SubnetParametersUpdated>> =>
  dataOf<typeof SubnetParametersUpdated>(
    await events.waitFor(
      (e) =>
        ofSubnet(e, 'subnet.parameters-updated', subnetId) &&
        (e.data as { version: number }).version === version,
      { timeoutMs, description: `${subnetId} parameters version ${version}` },
    ),
  );

/** `subnet.member-standing-changed` to `standing` for the provider. */
export const awaitStanding = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  providerId: string,
  standing: MemberStanding,
  timeoutMs = 30_000,
): Promise<PayloadOf<typeof SubnetMemberStandingChanged>> =>
  dataOf<typeof SubnetMemberStandingChanged>(
    await events.waitFor(
      (e) =>
        ofSubnet(e, 'subnet.member-standing-changed', subnetId) &&
        (e.data as { providerId: string }).providerId === providerId &&
        (e.data as { standing: string }).standing === standing,
      { timeoutMs, description: `${providerId} ${standing} in ${subnetId}` },
    ),
  );

/** `subnet.slash-proposed` for the evidence `reference` (a challenge id, a job id …). */
export const awaitSlashProposed = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  providerId: string,
  reference: string,
  timeoutMs = 30_000,
): Promise<PayloadOf<typeof SubnetSlashProposed>> =>
  dataOf<typeof SubnetSlashProposed>(
    await events.waitFor(
      (e) =>
        ofSubnet(e, 'subnet.slash-proposed', subnetId) &&
        (e.data as { providerId: string }).providerId === providerId &&
        (e.data as { evidence: { reference: string } }).evidence.reference === reference,
      { timeoutMs, description: `a slash of ${providerId} in ${subnetId} for ${reference}` },
    ),
  );

/** `subnet.provider-slashed` of a held slash: taken once its appeal window closed. */
export const awaitSlashTaken = async (
  events: EventCollector<Envelope>,
  subnetId: string,
  slashId: string,
  timeoutMs = 30_000,
): Promise<PayloadOf<typeof SubnetProviderSlashed>> =>
  dataOf<typeof SubnetProviderSlashed>(
    await events.waitFor(
      (e) =>
        ofSubnet(e, 'subnet.provider-slashed', subnetId) &&
        (e.data as { slashId?: string }).slashId === slashId,
      { timeoutMs, description: `slash ${slashId} taken in ${subnetId}` },
    ),
  );

/** A slash's amount and shares as ADR 0071 defines them (the oracle a test checks settlement against). */
export interface ExpectedSlash {
  readonly amount: bigint;
  readonly shares: readonly SlashShare[];
}

/**
 * ADR 0071's slash of `bps` on a provider's own stake plus its delegations: ⌊bps × total / 10 000⌋,
 * split pro rata to stake with floors, the remainder on the provider's own share; never above any
 * stake (each share is at most its stake, since the amount is at most the total).
 */
export const expectedSlash = (
  bps: number,
  providerId: string,
  own: bigint,
  delegations: readonly { readonly delegatorId: string; readonly amount: bigint }[],
): ExpectedSlash => {
  const total = delegations.reduce((s, d) => s + d.amount, own);
  const amount = total === 0n ? 0n : (total * BigInt(bps)) / 10_000n;
  const delegated = delegations.map((d) => ({
    stakerId: d.delegatorId,
    role: 'delegator' as const,
    amount: total === 0n ? 0n : (amount * d.amount) / total,
  }));
  const providerShare = amount - delegated.reduce((s, d) => s + d.amount, 0n);
  return {
    amount,
    shares: [
      { stakerId: providerId, role: 'provider', amount: providerShare.toString() },
      ...delegated.map((d) => ({ ...d, amount: d.amount.toString() })),
    ],
  };
};

/** One asset's ledger, summed over every account: both sums are zero in a balanced ledger. */
export interface LedgerTotals {
  readonly asset: string;
  /** Σ (credits posted − debits posted). */
  readonly posted: bigint;
  /** Σ (credits pending − debits pending). */
  readonly pending: bigint;
  readonly accounts: number;
}

/**
 * Settlement's ledger summed per asset, read from its Postgres schema (`ledger_accounts`): a
 * double-entry ledger sums to zero, posted and pending. What its chain pass checks too
 * (`ledger.reconciliation-mismatched` when it does not); read here so that a test asserts it at the
 * moment it chooses rather than waiting for the absence of an event.
 */
export const ledgerTotals = async (
  databaseUrl: string,
  settlementSchema: string,
): Promise<LedgerTotals[]> => {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ asset: string; posted: string; pending: string; accounts: string }>(
      `SELECT asset,
              SUM(credits_posted - debits_posted)::text AS posted,
              SUM(credits_pending - debits_pending)::text AS pending,
              COUNT(*)::text AS accounts
         FROM "${settlementSchema}".ledger_accounts
        GROUP BY asset ORDER BY asset`,
    );
    return rows.map((r) => ({
      asset: r.asset,
      posted: BigInt(r.posted),
      pending: BigInt(r.pending),
      accounts: Number(r.accounts),
    }));
  } finally {
    await pg.end();
  }
};

/** Every `ledger.reconciliation-mismatched` collected so far (settlement's chain pass found the ledger off). */
export const reconciliationMismatches = (events: EventCollector<Envelope>): Envelope[] =>
  events.items.filter((e) => e.type === 'ledger.reconciliation-mismatched');
