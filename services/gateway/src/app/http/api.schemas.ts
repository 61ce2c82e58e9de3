import {
  AccountBalanceSchema,
  AccountIdSchema,
  AssetSchema,
  EdgeIdSchema,
  EntityIdSchema,
  GpuVerificationStatusSchema,
  IsolationLevelSchema,
  LedgerLegSchema,
  MinorUnitsSchema,
  PlacementExplanationSchema,
  ProposalChangeSchema,
  ProposalIdSchema,
  ProposalViewSchema,
  ProviderTrustSchema,
  ProviderViewSchema,
  ReliabilitySchema,
  SlashIdSchema,
  SubnetEconomicsQuery,
  SubnetParametersSchema,
  SubnetProposalRequested,
  VoteChoiceSchema,
  WithdrawalSourceSchema,
} from '@gpunet/contracts';
import { z } from 'zod';
import { JOB_STATUSES, JobViewSchema } from '../../domain/job-view';
import { API_SCOPES } from '../api-keys';

/*
 * The REST API's shapes, once: handlers validate with them and the OpenAPI document is generated
 * from them (`openapi.ts`), so the document cannot drift from what the gateway accepts.
 */

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    instance: z.string(),
    code: z.string(),
    errors: z
      .array(
        z.object({
          path: z.string(),
          message: z.string(),
          code: z.string().optional(),
          line: z.int().optional(),
          column: z.int().optional(),
        }),
      )
      .optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details, with `code` and the fields at fault.' });

export const JobIdParams = z.strictObject({ jobId: EntityIdSchema });

const Money = MinorUnitsSchema;

export const JobSchema = JobViewSchema.meta({
  id: 'Job',
  description: 'A job: status, placement, overlay addresses, path report, usage, cost.',
});

/** `status=running,queued`: one or more statuses, comma-separated. */
const StatusList = z
  .string()
  .max(512)
  .transform((s, ctx) => {
    const parts = s.split(',').map((p) => p.trim());
    const bad = parts.filter((p) => !(JOB_STATUSES as readonly string[]).includes(p));
    if (bad.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown status ${bad.join(', ')}; one of ${JOB_STATUSES.join(', ')}`,
      });
      return z.NEVER;
    }
    return parts as (typeof JOB_STATUSES)[number][];
  })
  .meta({ description: `Comma-separated statuses: ${JOB_STATUSES.join(', ')}.` });

const Limit = (max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .meta({ description: `1–${max}, default ${fallback}.` });

export const JobListQuery = z.strictObject({
  status: StatusList.optional(),
  subnet: EntityIdSchema.optional(),
  limit: Limit(200, 50),
  cursor: z.string().min(1).max(512).optional().meta({ description: '`nextCursor` of the previous page.' }),
});

export const JobListSchema = z
  .object({ items: z.array(JobSchema), nextCursor: z.string().nullable() })
  .meta({ id: 'JobList' });

export const CancelBody = z
  .strictObject({ reason: z.string().max(1024).optional() })
  .meta({ id: 'CancelJob' });

const BooleanFlag = z
  .enum(['0', '1', 'true', 'false'])
  .transform((v) => v === '1' || v === 'true')
  .meta({ description: '1/true or 0/false.' });

export const LogsQuery = z.strictObject({
  follow: BooleanFlag.optional(),
  rank: z.coerce.number().int().min(0).max(65_535).optional(),
  stream: z.enum(['stdout', 'stderr']).optional(),
  after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().meta({
    description:
      'Resume after this log chunk (the SSE `id`, its JOB_LOGS sequence); also the Last-Event-ID header.',
  }),
});

export const EventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().meta({
    description:
      "Resume after this event (the SSE `id`, the job's own event number); also the Last-Event-ID header.",
  }),
});

export const JobStatementSchema = z
  .object({
    jobId: z.string(),
    status: z.enum(['unknown', 'funded', 'rejected', 'settled']),
    asset: z.string().nullable(),
    funded: Money,
    paidToProviders: Money,
    subnetFees: Money,
    platformFees: Money,
    refunded: Money,
    pending: Money,
    escrowBalance: Money,
    legs: z.array(LedgerLegSchema),
  })
  .meta({ id: 'JobStatement' });

/** The scheduler's explanation as it serves it (`scheduler.placement-explanation`). */
export const JobExplanationSchema = PlacementExplanationSchema.meta({ id: 'PlacementExplanation' });

export const CreateApiKeyBody = z
  .strictObject({
    tenantId: EntityIdSchema,
    scopes: z.array(z.enum(API_SCOPES)).min(1).max(3),
    name: z.string().min(1).max(200).optional(),
    /** Jobs of this tenant whose spec names no subnet run here. */
    defaultSubnet: EntityIdSchema.optional(),
  })
  .meta({ id: 'CreateApiKey' });

export const ApiKeySchema = z
  .object({
    keyId: z.string(),
    tenantId: z.string(),
    scopes: z.array(z.enum(API_SCOPES)),
    name: z.string().nullable(),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyCreatedSchema = z
  .object({
    key: z.string().nullable().meta({
      description: 'The secret key; shown once (null on an Idempotency-Key replay), stored only hashed.',
    }),
    apiKey: ApiKeySchema,
  })
  .meta({ id: 'ApiKeyCreated' });

export const ApiKeyListSchema = z.object({ items: z.array(ApiKeySchema) }).meta({ id: 'ApiKeyList' });

export const ApiKeyIdParams = z.strictObject({ keyId: z.string().regex(/^[A-Za-z0-9]{12}$/) });

export const ApiKeyListQuery = z.strictObject({ tenant: EntityIdSchema.optional() });

export const ProvidersQuery = z.strictObject({
  vendor: z.enum(['nvidia', 'amd']).default('nvidia'),
  model: z
    .string()
    .max(512)
    .optional()
    .meta({ description: 'Comma-separated GPU models (e.g. H100,A100); any when absent.' }),
  minVramBytes: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  minGpus: z.coerce.number().int().min(1).max(64).default(1),
  subnet: z.string().min(1).max(63).optional(),
  limit: Limit(1000, 100),
  cursor: z.string().min(1).max(128).optional(),
});

/** A GPU's verification as `GET /v1/providers/{providerId}` shows it; the listing shows its status. */
const GpuVerificationSchema = z.object({
  status: GpuVerificationStatusSchema.meta({
    description:
      'pending: not challenged yet; verified: its last challenge passed; unverified: a challenge ' +
      'failed (see the provider’s `challenges`); simulated: a simulated GPU, never challenged',
  }),
  since: z.string().nullable().meta({ description: 'when the status last changed; null: never' }),
  challengeId: z
    .string()
    .nullable()
    .meta({ description: 'the challenge behind the status (in `challenges` if recent)' }),
});

export const ProviderListSchema = z
  .object({
    items: z.array(
      z.object({
        providerId: z.string(),
        name: z.string(),
        simulated: z.boolean(),
        isolation: IsolationLevelSchema.meta({
          description:
            'how the edge runs ranks, weakest first: host-process, container, container-userns, gvisor (its ' +
            'detail: GET /v1/providers/{providerId}); a job goes only to edges at or above its subnet’s ' +
            '`trust.minimumIsolation`',
        }),
        subnets: z.array(z.string()),
        asset: z.string(),
        gpus: z.array(
          z.object({
            uuid: z.string(),
            model: z.string(),
            vendor: z.string(),
            vramBytes: z.number(),
            priceFloorMinor: z.string().nullable(),
            verification: GpuVerificationSchema.pick({ status: true }),
          }),
        ),
      }),
    ),
    nextCursor: z.string().nullable(),
  })
  .meta({
    id: 'ProviderList',
    description:
      'Online providers with free GPUs matching the filter, each GPU with its verification status; why ' +
      '(the challenges and their evidence): GET /v1/providers/{providerId}.',
  });

export const ProviderIdParams = z.strictObject({ providerId: EdgeIdSchema });

export const ProviderSchema = z
  .object({
    providerId: z.string(),
    name: z.string(),
    simulated: z.boolean().meta({
      description: 'Declared, not detected, hardware: a simulated edge. Every GPU of it says so too.',
    }),
    status: ProviderViewSchema.shape.status,
    isolation: IsolationLevelSchema.meta({
      description:
        'how the edge runs ranks, weakest first: host-process, container, container-userns, gvisor, as the ' +
        'edge checked and reported it (host-process when it reported none); a job goes only to edges at or ' +
        'above its subnet’s `trust.minimumIsolation`',
    }),
    isolationDetail: z.string().meta({
      description:
        'what the level rests on (the OCI runtime, user namespaces), or that the edge reported none',
    }),
    subnets: z.array(z.string()),
    asset: z.string(),
    maxGpusPerJob: z.int(),
    gpus: z.array(
      z.object({
        uuid: z.string(),
        index: z.int(),
        model: z.string(),
        vendor: z.string(),
        vramBytes: z.number(),
        priceFloorMinor: z.string().nullable(),
        available: z.boolean().meta({ description: 'offered now: online, shared, whole and unreserved' }),
        simulated: z.boolean(),
        verification: GpuVerificationSchema,
      }),
    ),
    reliability: ReliabilitySchema.nullable().meta({
      description:
        'the score placement breaks ties with, and its counts; null: benchmarking has no record yet',
    }),
    challenges: ProviderTrustSchema.shape.challenges.meta({
      description:
        'the latest challenges (at most 20), newest first, each with its evidence: seed, size, dtype, the ' +
        'claimed TFLOPS the deadline came from, elapsed vs deadline on the verifier’s clock, the opened rows and ' +
        'the failure',
    }),
  })
  .meta({
    id: 'Provider',
    description:
      "One provider as discovery knows it, with its trust from benchmarking: each GPU's verification, its " +
      'reliability and its latest challenges with their evidence.',
  });

export const SubnetIdParams = z.strictObject({ subnetId: EntityIdSchema });

export const CreateSubnetBody = z
  .strictObject({
    subnetId: EntityIdSchema,
    asset: AssetSchema,
    stake: Money,
    parameters: SubnetParametersSchema,
  })
  .meta({ id: 'CreateSubnet' });

export const JoinSubnetBody = z.strictObject({ stake: Money }).meta({ id: 'JoinSubnet' });

export const AcceptedSchema = z
  .object({
    requestId: z
      .string()
      .describe("the request's id (`X-Correlation-Id`): the correlation of what it caused"),
    type: z.string(),
    status: z.literal('accepted'),
    detail: z.string(),
  })
  .meta({ id: 'Accepted', description: 'The request was recorded; its outcome arrives asynchronously.' });

/** A proposal's request's answer: the proposal's id (the one given, or generated) with the request's. */
export const ProposalAcceptedSchema = AcceptedSchema.extend({
  proposalId: z.string().describe("the proposal's id: GET /v1/subnets/{subnetId}/proposals/{proposalId}"),
}).meta({
  id: 'ProposalAccepted',
  description: 'The proposal was recorded; settlement opens or rejects it asynchronously.',
});

export const SubnetEconomicsSchema = SubnetEconomicsQuery.response.meta({ id: 'SubnetEconomics' });

export const ProposalIdParams = z.strictObject({ subnetId: EntityIdSchema, proposalId: ProposalIdSchema });

export const SlashIdParams = z.strictObject({ subnetId: EntityIdSchema, slashId: SlashIdSchema });

export const DelegationParams = z.strictObject({ subnetId: EntityIdSchema, providerId: EntityIdSchema });

/** A proposal's title, as the request event takes it. */
const Title = SubnetProposalRequested.schema.shape.title;

/**
 * An amount that must move something: a delegation of nothing is refused here, naming the field.
 * The refinement also runs on values Money's pattern refused, so it parses nothing: the pattern's
 * one zero is '0'.
 */
const PositiveMoney = Money.refine((v) => v !== '0', { message: 'must be more than 0' });

export const UpdateSubnetParametersBody = z
  .strictObject({ parameters: SubnetParametersSchema })
  .meta({ id: 'UpdateSubnetParameters', description: "The subnet's whole new parameter set." });

export const CreateProposalBody = z
  .strictObject({
    proposalId: ProposalIdSchema.optional().meta({
      description: 'Your id for the proposal (unique in the subnet); generated when absent.',
    }),
    title: Title,
    change: ProposalChangeSchema,
  })
  .meta({ id: 'CreateSubnetProposal' });

export const VoteBody = z.strictObject({ choice: VoteChoiceSchema }).meta({ id: 'SubnetVote' });

export const DelegateBody = z
  .strictObject({ providerId: EntityIdSchema, amount: PositiveMoney })
  .meta({ id: 'SubnetDelegation', description: 'Stake to add to your delegation to a member provider.' });

export const AppealBody = z
  .strictObject({
    title: Title.optional().meta({ description: 'Default: `appeal against <slashId>`.' }),
    proposalId: ProposalIdSchema.optional().meta({
      description: "Your id for the appeal's proposal; generated when absent.",
    }),
  })
  .meta({ id: 'SubnetSlashAppeal' });

export const ProposalSchema = ProposalViewSchema.meta({
  id: 'SubnetProposal',
  description: 'A proposal as it stands: open, or decided with its tally.',
});

export const ProposalListSchema = z
  .object({ items: z.array(ProposalSchema) })
  .meta({ id: 'SubnetProposalList', description: "The subnet's proposals, newest first (at most 50)." });

export const BalancesQuery = z.strictObject({ asset: AssetSchema.optional() });

export const BalancesSchema = z.object({ accounts: z.array(AccountBalanceSchema) }).meta({ id: 'Balances' });

export const StatementQuery = z.strictObject({
  accountId: AccountIdSchema,
  afterSequence: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  limit: Limit(1000, 100),
});

export const StatementSchema = z
  .object({
    account: AccountBalanceSchema.nullable(),
    entries: z.array(LedgerLegSchema.extend({ direction: z.enum(['debit', 'credit']) })),
    nextAfterSequence: z.int().nullable(),
  })
  .meta({ id: 'Statement' });

export const SubnetStatementQuery = z.strictObject({
  afterSequence: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0).meta({
    description: 'Entries recorded after this ledger sequence, in every account (paging).',
  }),
  limit: Limit(1000, 100),
});

export const SubnetStatementSchema = z
  .object({
    subnetId: z.string(),
    asset: AssetSchema,
    accounts: z.array(
      z.object({
        accountId: AccountIdSchema,
        /** `stake`: your own stake (as owner or provider); `delegation`: your delegation to `providerId`. */
        role: z.enum(['stake', 'delegation']),
        providerId: z.string().nullable(),
        account: StatementSchema.shape.account,
        entries: StatementSchema.shape.entries,
        nextAfterSequence: StatementSchema.shape.nextAfterSequence,
      }),
    ),
  })
  .meta({
    id: 'SubnetStakeStatement',
    description: "Your stake account in the subnet and each of your delegations' accounts, entry by entry.",
  });

export const WithdrawalBody = z
  .strictObject({
    asset: AssetSchema,
    amount: Money,
    destination: z.string().min(1).max(256),
    source: WithdrawalSourceSchema.default('wallet'),
  })
  .meta({ id: 'Withdrawal' });

export const DepositBody = z
  .strictObject({ asset: AssetSchema, amount: Money })
  .meta({ id: 'Deposit', description: "A deposit to the caller's own wallet, in minor units." });

export const DepositSchema = z
  .object({
    chainTxId: z.string(),
    ownerId: z.string(),
    asset: z.string(),
    amount: Money,
    available: Money.meta({ description: "the wallet's available balance after the credit" }),
  })
  .meta({ id: 'DepositReceipt', description: 'The deposit, confirmed on the chain and credited.' });

export const HealthSchema = z.object({ status: z.enum(['ok', 'unavailable']) }).meta({ id: 'Health' });
export const ReadinessSchema = z
  .object({ status: z.enum(['ok', 'unavailable']), database: z.boolean(), nats: z.boolean() })
  .meta({ id: 'Readiness' });
