import {
  AccountIdSchema,
  AccountStatementQuery,
  FindCandidates,
  FindGpuVerification,
  GetProvider,
  GetProviderTrust,
  type GpuVerificationStatus,
  type InputOf,
  type MessageDefinition,
  newEventId,
  type PayloadOf,
  type QueryResponse,
  SettlementBalancesQuery,
  SimulatedChainDepositRequest,
  streamIdOf,
  SubnetCreateRequested,
  SubnetDelegationRequested,
  SubnetEconomicsQuery,
  SubnetJoinRequested,
  SubnetLeaveRequested,
  SubnetParametersUpdateRequested,
  SubnetProposalRequested,
  SubnetUndelegationRequested,
  SubnetVoteRequested,
  WithdrawalRequested,
} from '@gpunet/contracts';
import { type PRECISIONS } from '@gpunet/ensemble-spec';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { NotFoundError, UpstreamUnavailableError } from '../domain/gateway.errors';
import type { ApiPrincipal } from './api-keys';
import { IDEMPOTENCY, UPSTREAM } from './gateway.tokens';
import type * as S from './http/api.schemas';
import { type IdempotencyStore, requestHash, type StoredResponse } from './idempotency.store';
import { appendRequested, newRequestId } from './request-chain';
import type { Upstream } from './upstream';

const MIN_TFLOPS_ANY: Record<(typeof PRECISIONS)[number], null> = {
  fp64: null,
  fp32: null,
  tf32: null,
  fp16: null,
  bf16: null,
  fp8: null,
  int8: null,
};

/**
 * A GPU's status as both provider routes show it: a simulated GPU is `simulated` whatever else is
 * recorded, and one benchmarking has no record of is `pending`.
 */
const statusOf = (simulated: boolean, recorded: GpuVerificationStatus | undefined): GpuVerificationStatus =>
  simulated ? 'simulated' : (recorded ?? 'pending');

/** A silent benchmarking is a 503 naming it: GPUs shown without their verification would read as unchallenged. */
const verificationUnavailable = (what: string, error: unknown): never => {
  if (!(error instanceof UpstreamUnavailableError)) throw error;
  throw new UpstreamUnavailableError(
    `${what} verification is unavailable (benchmarking did not answer): ${error.message}`,
    { cause: error },
  );
};

/**
 * Providers, subnets and accounts: reads are settlement's and discovery's queries, writes are
 * requests recorded as events on the GATEWAY stream that settlement acts on (its outcome is an event
 * of its own: `subnet.created`, `subnet.request-rejected`, `withdrawal.held` …), each the first of
 * the request's chain.
 */
@Injectable()
export class MarketService {
  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(IDEMPOTENCY) private readonly idempotency: IdempotencyStore,
    @Inject(UPSTREAM) private readonly upstream: Upstream,
  ) {}

  private now(): string {
    return this.eventing.clock.now().toISOString();
  }

  /**
   * A page of discovery's candidates, each GPU with its verification status from benchmarking, asked
   * once per page; a silent benchmarking is a 503, as for one provider.
   */
  async providers(query: z.output<typeof S.ProvidersQuery>): Promise<z.input<typeof S.ProviderListSchema>> {
    const models = (query.model ?? '')
      .split(',')
      .map((m) => m.trim().toUpperCase().replace(/\s+/g, ' '))
      .filter((m) => m !== '');
    const page = await this.upstream.ask(FindCandidates, {
      gpu: {
        count: query.minGpus,
        vendor: query.vendor,
        models: [...new Set(models)].sort(),
        minVramBytes: query.minVramBytes,
        minComputeCapability: null,
        amdArchitectures: [],
        cuda: null,
        rocm: null,
        minTflops: MIN_TFLOPS_ANY,
        mixedModels: true,
      },
      minGpusPerProvider: query.minGpus,
      subnet: query.subnet ?? null,
      cursor: query.cursor ?? null,
      limit: query.limit,
    });
    if (page.items.length === 0) return { items: [], nextCursor: page.nextCursor };
    // One ask for the page's verification, after discovery's: it names the providers to ask about.
    const verification = await this.upstream
      .ask(FindGpuVerification, { providerIds: page.items.map((p) => p.providerId) })
      .catch((error: unknown) => verificationUnavailable("the listed providers'", error));
    const byProvider = new Map(verification.items.map((v) => [v.providerId, v]));
    return {
      items: page.items.map((p) => {
        const v = byProvider.get(p.providerId);
        const simulated = p.simulated || (v?.simulated ?? false);
        const statuses = new Map(v?.gpus.map((g) => [g.uuid, g.status]) ?? []);
        return {
          providerId: p.providerId,
          name: p.name,
          simulated,
          isolation: p.isolation,
          subnets: p.subnets,
          asset: p.asset,
          gpus: p.gpus.map((g) => {
            const status = statuses.get(g.uuid);
            return {
              uuid: g.uuid,
              model: g.model,
              vendor: g.vendor,
              vramBytes: g.vramBytes,
              priceFloorMinor: g.priceFloorMinor,
              verification: { status: statusOf(simulated, status) },
            };
          }),
        };
      }),
      nextCursor: page.nextCursor,
    };
  }

  /**
   * One provider as discovery knows it with its trust from benchmarking. Both are asked at once; an
   * unknown provider is a 404 whatever benchmarking says, and a silent benchmarking is a 503: GPUs
   * shown without their verification would read as unchallenged. A GPU benchmarking has no record
   * of is `pending` (`simulated` on a simulated edge); discovery's inventory decides which GPUs are
   * listed.
   */
  async provider(providerId: string): Promise<z.input<typeof S.ProviderSchema>> {
    const [view, trust] = await Promise.allSettled([
      this.upstream.ask(GetProvider, { providerId }),
      this.upstream.ask(GetProviderTrust, { providerId }),
    ]);
    if (view.status === 'rejected') throw view.reason;
    const p = view.value.provider;
    if (p === null) throw new NotFoundError(`no provider ${providerId}`);
    if (trust.status === 'rejected') return verificationUnavailable(`provider ${providerId}'s`, trust.reason);
    const t = trust.value.trust;
    const simulated = p.simulated || (t?.simulated ?? false);
    const verification = new Map(t?.gpus.map((g) => [g.uuid, g]) ?? []);
    return {
      providerId: p.providerId,
      name: p.name,
      simulated,
      status: p.status,
      isolation: p.isolation,
      isolationDetail: p.isolationDetail,
      subnets: p.subnets,
      asset: p.asset,
      maxGpusPerJob: p.maxGpusPerJob,
      gpus: p.gpus.map((g) => {
        const v = verification.get(g.uuid);
        return {
          uuid: g.uuid,
          index: g.index,
          model: g.model,
          vendor: g.vendor,
          vramBytes: g.vramBytes,
          priceFloorMinor: g.priceFloorMinor,
          available: g.available,
          simulated: simulated || v?.status === 'simulated',
          verification: {
            status: statusOf(simulated, v?.status),
            since: v?.since ?? null,
            challengeId: v?.challengeId ?? null,
          },
        };
      }),
      reliability: t?.reliability ?? null,
      challenges: t?.challenges ?? [],
    };
  }

  /**
   * Records a request as the first event of its chain, once per Idempotency-Key: 202 with the
   * request's id, and `extra` fields of the answer (a generated id the caller needs).
   */
  private request<D extends MessageDefinition>(
    principal: ApiPrincipal,
    route: string,
    rawBody: string,
    idempotencyKey: string | undefined,
    requested: { readonly def: D; readonly streamId: string; readonly data: InputOf<D> },
    detail: string,
    options: { readonly method?: 'POST' | 'DELETE'; readonly extra?: Readonly<Record<string, string>> } = {},
  ): Promise<StoredResponse> {
    const hash = requestHash(options.method ?? 'POST', route, 'application/json', rawBody);
    return this.idempotency.run(principal.tenantId, idempotencyKey, hash, async (tx) => {
      const requestId = newRequestId();
      await appendRequested(
        this.eventing,
        tx,
        { requestId, streamId: requested.streamId, expectedVersion: 'any' },
        requested.def,
        requested.data,
      );
      return {
        status: 202,
        body: { requestId, type: requested.def.type, status: 'accepted', detail, ...options.extra },
        correlationId: requestId,
      };
    });
  }

  createSubnet(
    principal: ApiPrincipal,
    body: z.output<typeof S.CreateSubnetBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const data: PayloadOf<typeof SubnetCreateRequested> = {
      subnetId: body.subnetId,
      ownerId: principal.tenantId,
      asset: body.asset,
      stake: body.stake,
      parameters: body.parameters,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      '/v1/subnets',
      rawBody,
      idempotencyKey,
      { def: SubnetCreateRequested, streamId: streamIdOf('subnet', body.subnetId), data },
      `settlement creates subnet ${body.subnetId} or rejects the request; GET /v1/subnets/${body.subnetId}`,
    );
  }

  joinSubnet(
    principal: ApiPrincipal,
    subnetId: string,
    body: z.output<typeof S.JoinSubnetBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const data: PayloadOf<typeof SubnetJoinRequested> = {
      subnetId,
      providerId: principal.tenantId,
      stake: body.stake,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      `/v1/subnets/${subnetId}/join`,
      rawBody,
      idempotencyKey,
      { def: SubnetJoinRequested, streamId: streamIdOf('subnet', subnetId), data },
      `settlement adds ${principal.tenantId} to ${subnetId} or rejects the request`,
    );
  }

  updateSubnetParameters(
    principal: ApiPrincipal,
    subnetId: string,
    body: z.output<typeof S.UpdateSubnetParametersBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const data: PayloadOf<typeof SubnetParametersUpdateRequested> = {
      subnetId,
      ownerId: principal.tenantId,
      parameters: body.parameters,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      `/v1/subnets/${subnetId}/parameters`,
      rawBody,
      idempotencyKey,
      { def: SubnetParametersUpdateRequested, streamId: streamIdOf('subnet', subnetId), data },
      `settlement applies the parameters as ${subnetId}'s next version or rejects the request; GET /v1/subnets/${subnetId}`,
    );
  }

  leaveSubnet(
    principal: ApiPrincipal,
    subnetId: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const data: PayloadOf<typeof SubnetLeaveRequested> = {
      subnetId,
      providerId: principal.tenantId,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      `/v1/subnets/${subnetId}/leave`,
      '',
      idempotencyKey,
      { def: SubnetLeaveRequested, streamId: streamIdOf('subnet', subnetId), data },
      `settlement starts unbonding ${principal.tenantId}'s stake in ${subnetId} or rejects the request`,
    );
  }

  /** A proposal; its id is the caller's, or generated here and returned (a replay returns the first). */
  propose(
    principal: ApiPrincipal,
    subnetId: string,
    body: z.output<typeof S.CreateProposalBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    return this.proposal(principal, `/v1/subnets/${subnetId}/proposals`, rawBody, idempotencyKey, {
      subnetId,
      proposalId: body.proposalId,
      title: body.title,
      change: body.change,
    });
  }

  /** An appeal against a held slash: a proposal to overturn it, decided as the subnet's governance decides. */
  appeal(
    principal: ApiPrincipal,
    subnetId: string,
    slashId: string,
    body: z.output<typeof S.AppealBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    return this.proposal(
      principal,
      `/v1/subnets/${subnetId}/slashes/${slashId}/appeal`,
      rawBody,
      idempotencyKey,
      {
        subnetId,
        proposalId: body.proposalId,
        title: body.title ?? `appeal against ${slashId}`,
        change: { kind: 'overturn-slash', slashId },
      },
    );
  }

  /** The proposal's id is the caller's or generated here; a replay answers the first request's. */
  private proposal(
    principal: ApiPrincipal,
    route: string,
    rawBody: string,
    idempotencyKey: string | undefined,
    proposal: Pick<PayloadOf<typeof SubnetProposalRequested>, 'subnetId' | 'title' | 'change'> & {
      readonly proposalId: string | undefined;
    },
  ): Promise<StoredResponse> {
    const { subnetId } = proposal;
    const proposalId = proposal.proposalId ?? newEventId();
    const data: PayloadOf<typeof SubnetProposalRequested> = {
      subnetId,
      proposalId,
      proposerId: principal.tenantId,
      title: proposal.title,
      change: proposal.change,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      route,
      rawBody,
      idempotencyKey,
      { def: SubnetProposalRequested, streamId: streamIdOf('subnet', subnetId), data },
      `settlement opens proposal ${proposalId} in ${subnetId} or rejects it; GET /v1/subnets/${subnetId}/proposals/${proposalId}`,
      { extra: { proposalId } },
    );
  }

  vote(
    principal: ApiPrincipal,
    subnetId: string,
    proposalId: string,
    body: z.output<typeof S.VoteBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const data: PayloadOf<typeof SubnetVoteRequested> = {
      subnetId,
      proposalId,
      voterId: principal.tenantId,
      choice: body.choice,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      `/v1/subnets/${subnetId}/proposals/${proposalId}/votes`,
      rawBody,
      idempotencyKey,
      { def: SubnetVoteRequested, streamId: streamIdOf('subnet', subnetId), data },
      `settlement counts ${principal.tenantId}'s vote (${body.choice}) on ${proposalId} with its stake, or rejects it`,
    );
  }

  delegate(
    principal: ApiPrincipal,
    subnetId: string,
    body: z.output<typeof S.DelegateBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const data: PayloadOf<typeof SubnetDelegationRequested> = {
      subnetId,
      delegatorId: principal.tenantId,
      providerId: body.providerId,
      amount: body.amount,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      `/v1/subnets/${subnetId}/delegations`,
      rawBody,
      idempotencyKey,
      { def: SubnetDelegationRequested, streamId: streamIdOf('subnet', subnetId), data },
      `settlement locks ${body.amount} from your wallet as stake delegated to ${body.providerId} in ${subnetId}, or rejects the request`,
    );
  }

  undelegate(
    principal: ApiPrincipal,
    subnetId: string,
    providerId: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const data: PayloadOf<typeof SubnetUndelegationRequested> = {
      subnetId,
      delegatorId: principal.tenantId,
      providerId,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      `/v1/subnets/${subnetId}/delegations/${providerId}`,
      '',
      idempotencyKey,
      { def: SubnetUndelegationRequested, streamId: streamIdOf('subnet', subnetId), data },
      `settlement starts unbonding your delegation to ${providerId} in ${subnetId}, or rejects the request`,
      { method: 'DELETE' },
    );
  }

  /**
   * A subnet's economics, as settlement answers it: a subnet that does not exist is a 404. The last
   * refused request on it (settlement's word on why, whatever its kind: a creation, an update, a
   * vote …) is shown to whoever made it, and to no one else: a refused creation answers its
   * requester 404 with the reason (`parameters.trust.simulatedGpus: …`), anyone else a plain 404.
   */
  private async economics(
    principal: ApiPrincipal,
    subnetId: string,
  ): Promise<QueryResponse<typeof SubnetEconomicsQuery>> {
    const economics = await this.upstream.ask(SubnetEconomicsQuery, { subnetId });
    const rejection = economics.lastRejection ?? null;
    const mine = rejection !== null && rejection.requesterId === principal.tenantId ? rejection : null;
    if (!economics.exists) {
      if (mine !== null && mine.request === 'create')
        throw new NotFoundError(
          `no subnet ${subnetId}: its creation was rejected (${mine.reason}): ${mine.message}`,
        );
      throw new NotFoundError(`no subnet ${subnetId}`);
    }
    return { ...economics, lastRejection: mine };
  }

  subnet(principal: ApiPrincipal, subnetId: string): Promise<z.input<typeof S.SubnetEconomicsSchema>> {
    return this.economics(principal, subnetId);
  }

  async proposals(principal: ApiPrincipal, subnetId: string): Promise<z.input<typeof S.ProposalListSchema>> {
    return { items: (await this.economics(principal, subnetId)).proposals ?? [] };
  }

  /** One of the subnet's proposals settlement shows (its 50 newest). */
  async proposalOf(
    principal: ApiPrincipal,
    subnetId: string,
    proposalId: string,
  ): Promise<z.input<typeof S.ProposalSchema>> {
    const found = (await this.economics(principal, subnetId)).proposals?.find(
      (p) => p.proposalId === proposalId,
    );
    if (found === undefined) throw new NotFoundError(`no proposal ${proposalId} in subnet ${subnetId}`);
    return found;
  }

  /**
   * The caller's stake in a subnet: its own stake account (`stake:<tenant>@<subnet>`) and one account
   * per provider it delegates to (`stake:<tenant>@<subnet>@<provider>`), each entry by entry after
   * `afterSequence`. Only the caller's accounts are named: another tenant's stake is not reachable
   * here. An id the ledger could not hold (too long) is an account that does not exist.
   */
  async stakeStatement(
    principal: ApiPrincipal,
    subnetId: string,
    query: z.output<typeof S.SubnetStatementQuery>,
  ): Promise<z.input<typeof S.SubnetStatementSchema>> {
    const economics = await this.economics(principal, subnetId);
    const asset = economics.asset;
    if (asset === null) throw new NotFoundError(`no subnet ${subnetId}`);
    const owner = `${principal.tenantId}@${subnetId}`;
    const providers = [
      ...new Set(
        (economics.delegations ?? [])
          .filter((d) => d.delegatorId === principal.tenantId)
          .map((d) => d.providerId),
      ),
    ];
    const wanted = [
      { role: 'stake' as const, providerId: null, accountId: `${asset}:stake:${owner}` },
      ...providers.map((providerId) => ({
        role: 'delegation' as const,
        providerId,
        accountId: `${asset}:stake:${owner}@${providerId}`,
      })),
    ];
    const accounts = await Promise.all(
      wanted.map(async (w) => {
        if (!AccountIdSchema.safeParse(w.accountId).success)
          return { ...w, account: null, entries: [], nextAfterSequence: null };
        const page = await this.upstream.ask(AccountStatementQuery, {
          accountId: w.accountId,
          afterSequence: query.afterSequence,
          limit: query.limit,
        });
        return { ...w, ...page };
      }),
    );
    return { subnetId, asset, accounts };
  }

  balances(principal: ApiPrincipal, asset: string | undefined): Promise<unknown> {
    return this.upstream.ask(SettlementBalancesQuery, {
      ownerId: principal.tenantId,
      ...(asset !== undefined ? { asset } : {}),
    });
  }

  /** An account's entries; an account of another owner does not exist for the caller. */
  async statement(principal: ApiPrincipal, query: z.output<typeof S.StatementQuery>): Promise<unknown> {
    const owner = query.accountId.split(':')[2]?.split('#')[0];
    if (owner !== principal.tenantId) throw new NotFoundError(`no account ${query.accountId}`);
    return this.upstream.ask(AccountStatementQuery, {
      accountId: query.accountId,
      afterSequence: query.afterSequence,
      limit: query.limit,
    });
  }

  /**
   * A deposit to the caller's own wallet through settlement's simulated chain: confirmed and
   * credited before settlement answers. Asked inside the Idempotency-Key's transaction, so a retry
   * with the same key replays the receipt instead of depositing twice, and a failed ask rolls the
   * key back. Settlement on a real chain does not serve the request: a 503 that says so.
   */
  deposit(
    principal: ApiPrincipal,
    body: z.output<typeof S.DepositBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const hash = requestHash('POST', '/v1/accounts/deposits', 'application/json', rawBody);
    return this.idempotency.run(principal.tenantId, idempotencyKey, hash, async () => {
      let receipt: { chainTxId: string; available: string };
      try {
        receipt = await this.upstream.ask(SimulatedChainDepositRequest, {
          ownerId: principal.tenantId,
          asset: body.asset,
          amount: body.amount,
        });
      } catch (error) {
        if (!(error instanceof UpstreamUnavailableError)) throw error;
        throw new UpstreamUnavailableError(
          'deposits here need settlement on the simulated chain (a development cluster), and it did not ' +
            "answer; on a real chain, deposit with a wallet to your tenant's deposit address",
          { cause: error },
        );
      }
      return {
        status: 201,
        body: {
          chainTxId: receipt.chainTxId,
          ownerId: principal.tenantId,
          asset: body.asset,
          amount: body.amount,
          available: receipt.available,
        },
      };
    });
  }

  withdraw(
    principal: ApiPrincipal,
    body: z.output<typeof S.WithdrawalBody>,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const withdrawalId = newEventId();
    const data: PayloadOf<typeof WithdrawalRequested> = {
      withdrawalId,
      ownerId: principal.tenantId,
      source: body.source,
      asset: body.asset,
      amount: body.amount,
      destination: body.destination,
      requestedAt: this.now(),
    };
    return this.request(
      principal,
      '/v1/accounts/withdrawals',
      rawBody,
      idempotencyKey,
      { def: WithdrawalRequested, streamId: streamIdOf('withdrawal', withdrawalId), data },
      `withdrawal ${withdrawalId}: settlement holds the amount and sends it, or rejects it`,
    );
  }
}
