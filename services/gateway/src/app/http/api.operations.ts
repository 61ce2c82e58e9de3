import { ensembleSpecJsonSchema } from '@gpunet/ensemble-spec';
import type { z } from 'zod';
import type { ApiScope } from '../api-keys';
import * as S from './api.schemas';

/** One operation of the REST API, as the OpenAPI document describes it. */
export interface ApiOperation {
  readonly operationId: string;
  readonly method: 'get' | 'post' | 'delete';
  /** OpenAPI path template (`/v1/jobs/{jobId}`). */
  readonly path: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  /** The scope the API key needs; null: no authentication (health, docs). */
  readonly scope: ApiScope | null;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  /**
   * Request body: its zod schema, or a JSON Schema (2020-12, shared parts in `$defs`) for bodies the
   * gateway does not parse with zod — the ensemble spec, which is YAML or JSON. Both are bundled into
   * the document's components.
   */
  readonly body?:
    | { readonly schema: z.ZodType; readonly required: boolean }
    | { readonly jsonSchema: Readonly<Record<string, unknown>>; readonly contentTypes: readonly string[] };
  readonly idempotent?: boolean;
  /**
   * The request starts a chain: what it appends carries its id as correlation, and its success
   * response (and a replay of it) names that id in `X-Correlation-Id`.
   */
  readonly startsChain?: boolean;
  readonly responses: Readonly<
    Record<
      number,
      { readonly description: string; readonly schema?: z.ZodType; readonly contentType?: string }
    >
  >;
}

const SSE = 'text/event-stream';

/** Every operation of the REST API: the source of the OpenAPI document and `docs/api.md`. */
export const API_OPERATIONS: readonly ApiOperation[] = [
  {
    operationId: 'health',
    method: 'get',
    path: '/healthz',
    tag: 'system',
    summary: 'Liveness: the process serves HTTP',
    scope: null,
    responses: { 200: { description: 'alive', schema: S.HealthSchema } },
  },
  {
    operationId: 'readiness',
    method: 'get',
    path: '/readyz',
    tag: 'system',
    summary: 'Readiness: Postgres and NATS answer',
    scope: null,
    responses: {
      200: { description: 'ready', schema: S.ReadinessSchema },
      503: {
        description: 'a dependency is down',
        schema: S.ReadinessSchema,
        contentType: 'application/json',
      },
    },
  },
  {
    operationId: 'metrics',
    method: 'get',
    path: '/metrics',
    tag: 'system',
    summary: 'Prometheus metrics',
    scope: null,
    responses: { 200: { description: 'metrics in the Prometheus text format', contentType: 'text/plain' } },
  },
  {
    operationId: 'submitJob',
    method: 'post',
    path: '/v1/jobs',
    tag: 'jobs',
    summary: 'Submit a job',
    description:
      'The body is an ensemble spec (docs/ensemble-spec.md) in YAML (`application/yaml`) or JSON (`application/json`). ' +
      'Errors name each field with its path and line:column in the document. The job needs a `budget`; its subnet is ' +
      "the spec's `subnet` or the tenant's default.",
    scope: 'submit',
    body: {
      jsonSchema: ensembleSpecJsonSchema('draft-2020-12'),
      contentTypes: ['application/yaml', 'application/json'],
    },
    idempotent: true,
    startsChain: true,
    responses: {
      202: {
        description: 'submitted; settlement escrows its budget, then the scheduler places it',
        schema: S.JobSchema,
      },
      400: { description: 'the spec is invalid (errors with paths and line:column)' },
    },
  },
  {
    operationId: 'listJobs',
    method: 'get',
    path: '/v1/jobs',
    tag: 'jobs',
    summary: "The tenant's jobs, newest first",
    scope: 'read',
    query: S.JobListQuery,
    responses: { 200: { description: 'a page of jobs', schema: S.JobListSchema } },
  },
  {
    operationId: 'getJob',
    method: 'get',
    path: '/v1/jobs/{jobId}',
    tag: 'jobs',
    summary: 'A job: status, placement, overlay addresses, path report, usage and cost so far',
    scope: 'read',
    params: S.JobIdParams,
    responses: { 200: { description: 'the job', schema: S.JobSchema }, 404: { description: 'no such job' } },
  },
  {
    operationId: 'getJobSpec',
    method: 'get',
    path: '/v1/jobs/{jobId}/spec',
    tag: 'jobs',
    summary: "The job's normalized ensemble spec",
    scope: 'read',
    params: S.JobIdParams,
    responses: { 200: { description: 'the normalized spec' }, 404: { description: 'no such job' } },
  },
  {
    operationId: 'cancelJob',
    method: 'post',
    path: '/v1/jobs/{jobId}/cancel',
    tag: 'jobs',
    summary: 'Cancel a job (at any stage before it ends)',
    scope: 'submit',
    params: S.JobIdParams,
    body: { schema: S.CancelBody, required: false },
    idempotent: true,
    startsChain: true,
    responses: {
      202: { description: 'cancellation requested; execution stops the ranks', schema: S.JobSchema },
      404: { description: 'no such job' },
      409: { description: 'the job has already ended' },
    },
  },
  {
    operationId: 'jobEvents',
    method: 'get',
    path: '/v1/jobs/{jobId}/events',
    tag: 'jobs',
    summary: "The job's events (server-sent events): its history, then live events until it ends",
    scope: 'read',
    params: S.JobIdParams,
    query: S.EventsQuery,
    responses: {
      200: { description: 'an event stream', contentType: SSE },
      404: { description: 'no such job' },
    },
  },
  {
    operationId: 'jobLogs',
    method: 'get',
    path: '/v1/jobs/{jobId}/logs',
    tag: 'jobs',
    summary: "The ranks' output (server-sent events); `follow=1` keeps streaming",
    scope: 'read',
    params: S.JobIdParams,
    query: S.LogsQuery,
    responses: {
      200: { description: 'an event stream of log chunks', contentType: SSE },
      404: { description: 'no such job' },
    },
  },
  {
    operationId: 'jobStatement',
    method: 'get',
    path: '/v1/jobs/{jobId}/statement',
    tag: 'jobs',
    summary: "The job's money: escrow, accruals, payments, fees, refund and ledger legs",
    scope: 'read',
    params: S.JobIdParams,
    responses: {
      200: { description: 'the statement', schema: S.JobStatementSchema },
      404: { description: 'no such job' },
    },
  },
  {
    operationId: 'jobExplanation',
    method: 'get',
    path: '/v1/jobs/{jobId}/explanation',
    tag: 'jobs',
    summary:
      'Why the job is placed where it is (chosen nodes; predicted step time as compute and communication; every figure with its source and age; the best alternatives and why they lost), or why it is not placed',
    scope: 'read',
    params: S.JobIdParams,
    responses: {
      200: { description: "the scheduler's explanation of its last attempt", schema: S.JobExplanationSchema },
      404: { description: 'no such job, or the scheduler has not tried to place it yet' },
    },
  },
  {
    operationId: 'listProviders',
    method: 'get',
    path: '/v1/providers',
    tag: 'providers',
    summary: 'Online providers with free GPUs, filtered by vendor, model, memory, subnet',
    scope: 'read',
    query: S.ProvidersQuery,
    responses: { 200: { description: 'a page of providers', schema: S.ProviderListSchema } },
  },
  {
    operationId: 'getProvider',
    method: 'get',
    path: '/v1/providers/{providerId}',
    tag: 'providers',
    summary:
      "One provider, online or not: its GPUs with each one's verification status, its reliability and its latest challenges with their evidence",
    description:
      "Discovery's view of the provider joined with benchmarking's trust record, so a provider sees why its " +
      'GPUs are unverified (a late commitment, a wrong row …). Simulated providers and each of their GPUs are ' +
      'labelled `simulated`. Both services are asked; if benchmarking does not answer, the request fails (503) ' +
      'rather than showing GPUs without their verification.',
    scope: 'read',
    params: S.ProviderIdParams,
    responses: {
      200: { description: 'the provider', schema: S.ProviderSchema },
      404: { description: 'no such provider (or it deregistered)' },
      503: { description: 'discovery or benchmarking did not answer' },
    },
  },
  {
    operationId: 'createSubnet',
    method: 'post',
    path: '/v1/subnets',
    tag: 'subnets',
    summary: "Create a subnet owned by the caller's tenant, locking its stake",
    scope: 'submit',
    body: { schema: S.CreateSubnetBody, required: true },
    idempotent: true,
    startsChain: true,
    responses: {
      202: { description: 'requested; settlement creates or rejects it', schema: S.AcceptedSchema },
    },
  },
  {
    operationId: 'getSubnet',
    method: 'get',
    path: '/v1/subnets/{subnetId}',
    tag: 'subnets',
    summary:
      "A subnet's economics: parameters, stake, treasury, members with their standing, delegations, proposals, slashes, health",
    description:
      'The last request on the subnet that settlement refused (`lastRejection`, any kind: create, update, ' +
      'join, leave, propose, vote, delegate, undelegate) is shown to its requester only; null for anyone else.',
    scope: 'read',
    params: S.SubnetIdParams,
    responses: {
      200: { description: 'the subnet', schema: S.SubnetEconomicsSchema },
      404: { description: 'no such subnet' },
    },
  },
  {
    operationId: 'joinSubnet',
    method: 'post',
    path: '/v1/subnets/{subnetId}/join',
    tag: 'subnets',
    summary: "Join a subnet as a provider (the caller's tenant), locking a stake",
    scope: 'submit',
    params: S.SubnetIdParams,
    body: { schema: S.JoinSubnetBody, required: true },
    idempotent: true,
    startsChain: true,
    responses: { 202: { description: 'requested', schema: S.AcceptedSchema } },
  },
  {
    operationId: 'updateSubnetParameters',
    method: 'post',
    path: '/v1/subnets/{subnetId}/parameters',
    tag: 'subnets',
    summary: "Set a subnet's parameters as its owner (the caller's tenant): a new version, for new jobs",
    description:
      'Only in a subnet governed by its owner (`governance.mode: owner`); in a `stake-vote` subnet, propose ' +
      'the change instead (settlement refuses the update: `governance-mode`). Jobs keep the version they were ' +
      'funded under.',
    scope: 'submit',
    params: S.SubnetIdParams,
    body: { schema: S.UpdateSubnetParametersBody, required: true },
    idempotent: true,
    startsChain: true,
    responses: {
      202: { description: 'requested; settlement applies or rejects it', schema: S.AcceptedSchema },
    },
  },
  {
    operationId: 'leaveSubnet',
    method: 'post',
    path: '/v1/subnets/{subnetId}/leave',
    tag: 'subnets',
    summary: "Leave a subnet as a provider (the caller's tenant): its stake unbonds, slashable meanwhile",
    description: 'Takes no body.',
    scope: 'submit',
    params: S.SubnetIdParams,
    idempotent: true,
    startsChain: true,
    responses: { 202: { description: 'requested', schema: S.AcceptedSchema } },
  },
  {
    operationId: 'proposeSubnetChange',
    method: 'post',
    path: '/v1/subnets/{subnetId}/proposals',
    tag: 'subnets',
    summary: 'Propose a change to a stake-vote subnet as one of its members: a whole new parameter set',
    description:
      'Any member (owner, provider or delegator) proposes; members vote with their stake until ' +
      "`votingEndsAt`. An `overturn-slash` change is an appeal (also `…/slashes/{slashId}/appeal`). The answer's " +
      '`proposalId` is the one given, or one generated for it.',
    scope: 'submit',
    params: S.SubnetIdParams,
    body: { schema: S.CreateProposalBody, required: true },
    idempotent: true,
    startsChain: true,
    responses: {
      202: { description: 'requested; settlement opens or rejects it', schema: S.ProposalAcceptedSchema },
    },
  },
  {
    operationId: 'listSubnetProposals',
    method: 'get',
    path: '/v1/subnets/{subnetId}/proposals',
    tag: 'subnets',
    summary:
      "A subnet's proposals, newest first (at most 50): open ones with their tally so far, decided ones",
    scope: 'read',
    params: S.SubnetIdParams,
    responses: {
      200: { description: 'the proposals', schema: S.ProposalListSchema },
      404: { description: 'no such subnet' },
    },
  },
  {
    operationId: 'getSubnetProposal',
    method: 'get',
    path: '/v1/subnets/{subnetId}/proposals/{proposalId}',
    tag: 'subnets',
    summary: 'One proposal of a subnet (of its 50 newest): status, tally, when it closes or takes effect',
    scope: 'read',
    params: S.ProposalIdParams,
    responses: {
      200: { description: 'the proposal', schema: S.ProposalSchema },
      404: { description: 'no such subnet, or no such proposal among its 50 newest' },
    },
  },
  {
    operationId: 'voteOnSubnetProposal',
    method: 'post',
    path: '/v1/subnets/{subnetId}/proposals/{proposalId}/votes',
    tag: 'subnets',
    summary: "Vote on an open proposal with the caller's stake; a later vote replaces an earlier one",
    scope: 'submit',
    params: S.ProposalIdParams,
    body: { schema: S.VoteBody, required: true },
    idempotent: true,
    startsChain: true,
    responses: { 202: { description: 'requested', schema: S.AcceptedSchema } },
  },
  {
    operationId: 'delegateSubnetStake',
    method: 'post',
    path: '/v1/subnets/{subnetId}/delegations',
    tag: 'subnets',
    summary:
      "Delegate stake from the caller's wallet to a member provider: it shares the provider's rewards and slashes",
    scope: 'submit',
    params: S.SubnetIdParams,
    body: { schema: S.DelegateBody, required: true },
    idempotent: true,
    startsChain: true,
    responses: { 202: { description: 'requested', schema: S.AcceptedSchema } },
  },
  {
    operationId: 'undelegateSubnetStake',
    method: 'delete',
    path: '/v1/subnets/{subnetId}/delegations/{providerId}',
    tag: 'subnets',
    summary: "Take back the caller's whole delegation to a provider: it unbonds, slashable meanwhile",
    description: 'Takes no body.',
    scope: 'submit',
    params: S.DelegationParams,
    idempotent: true,
    startsChain: true,
    responses: { 202: { description: 'requested', schema: S.AcceptedSchema } },
  },
  {
    operationId: 'appealSubnetSlash',
    method: 'post',
    path: '/v1/subnets/{subnetId}/slashes/{slashId}/appeal',
    tag: 'subnets',
    summary:
      'Appeal a held slash: a proposal to overturn it, decided as the subnet decides (its owner, or a stake vote)',
    description:
      'The same request as a proposal with change `{kind: overturn-slash, slashId}`; settlement refuses it ' +
      'once the appeal window has closed (`appeal-closed`).',
    scope: 'submit',
    params: S.SlashIdParams,
    body: { schema: S.AppealBody, required: false },
    idempotent: true,
    startsChain: true,
    responses: {
      202: { description: 'requested; settlement opens or rejects it', schema: S.ProposalAcceptedSchema },
    },
  },
  {
    operationId: 'subnetStakeStatement',
    method: 'get',
    path: '/v1/subnets/{subnetId}/statement',
    tag: 'subnets',
    summary: "The caller's stake in a subnet, entry by entry: its own stake account and each delegation's",
    description:
      'Accounts `<asset>:stake:<tenant>@<subnet>` and `<asset>:stake:<tenant>@<subnet>@<provider>` for each ' +
      "provider the caller delegates to; `afterSequence` pages every account alike (ledger sequences are the ledger's).",
    scope: 'read',
    params: S.SubnetIdParams,
    query: S.SubnetStatementQuery,
    responses: {
      200: { description: 'the accounts and their entries', schema: S.SubnetStatementSchema },
      404: { description: 'no such subnet' },
    },
  },
  {
    operationId: 'balances',
    method: 'get',
    path: '/v1/accounts/balances',
    tag: 'accounts',
    summary: "The tenant's accounts with posted, pending and available balances",
    scope: 'read',
    query: S.BalancesQuery,
    responses: { 200: { description: 'balances', schema: S.BalancesSchema } },
  },
  {
    operationId: 'statement',
    method: 'get',
    path: '/v1/accounts/statement',
    tag: 'accounts',
    summary: "One of the tenant's accounts, entry by entry",
    scope: 'read',
    query: S.StatementQuery,
    responses: {
      200: { description: 'a page of entries', schema: S.StatementSchema },
      404: { description: 'not your account' },
    },
  },
  {
    operationId: 'withdraw',
    method: 'post',
    path: '/v1/accounts/withdrawals',
    tag: 'accounts',
    summary: 'Withdraw funds to a chain address',
    scope: 'submit',
    body: { schema: S.WithdrawalBody, required: true },
    idempotent: true,
    startsChain: true,
    responses: { 202: { description: 'requested; settlement holds and sends it', schema: S.AcceptedSchema } },
  },
  {
    operationId: 'deposit',
    method: 'post',
    path: '/v1/accounts/deposits',
    tag: 'accounts',
    summary: "Deposit to your wallet on a development cluster's simulated chain",
    description:
      "Settlement confirms the deposit on its simulated chain and credits the caller's wallet before " +
      'answering. Only a cluster whose settlement runs the simulated chain answers; on a real chain, ' +
      "deposits go through a wallet to the tenant's deposit address (503 here).",
    scope: 'submit',
    body: { schema: S.DepositBody, required: true },
    idempotent: true,
    responses: {
      201: { description: 'deposited and credited', schema: S.DepositSchema },
      503: { description: 'settlement does not run the simulated chain, or is not answering' },
    },
  },
  {
    operationId: 'createApiKey',
    method: 'post',
    path: '/v1/admin/api-keys',
    tag: 'admin',
    summary: 'Create an API key for a tenant (the key is shown once)',
    scope: 'admin',
    body: { schema: S.CreateApiKeyBody, required: true },
    idempotent: true,
    responses: { 201: { description: 'created', schema: S.ApiKeyCreatedSchema } },
  },
  {
    operationId: 'listApiKeys',
    method: 'get',
    path: '/v1/admin/api-keys',
    tag: 'admin',
    summary: 'API keys (never their secrets)',
    scope: 'admin',
    query: S.ApiKeyListQuery,
    responses: { 200: { description: 'keys', schema: S.ApiKeyListSchema } },
  },
  {
    operationId: 'revokeApiKey',
    method: 'delete',
    path: '/v1/admin/api-keys/{keyId}',
    tag: 'admin',
    summary: 'Revoke an API key',
    scope: 'admin',
    params: S.ApiKeyIdParams,
    responses: { 204: { description: 'revoked' }, 404: { description: 'no such key' } },
  },
];
