import { z } from 'zod';
import { defineEvent } from '../message';
import { defineQuery } from '../query';
import {
  AssetSchema,
  EntityIdSchema,
  FaultKindSchema,
  GpuClassSchema,
  MinorUnitsSchema,
  SignedMinorUnitsSchema,
  TimestampSchema,
} from './primitives';
import { GatewayStream, SettlementStream } from './streams';

/*
 * Settlement's messages (F8, docs/economy.md): escrow, metering, payouts, deposits and withdrawals,
 * subnets and stake, reconciliation, and the queries that read balances and statements. Requests
 * people make through the gateway (create a subnet, join it, withdraw) are events on the gateway's
 * stream; everything settlement decides is an event on its own stream.
 */

const Bps = z.int().min(0).max(10_000);

// ---------------------------------------------------------------------------------------------
// Subnet parameters

/** How a subnet prices GPU time, per GPU-hour in minor units. */
export const SubnetPricingSchema = z.discriminatedUnion('mode', [
  z.strictObject({
    /** A fixed price per GPU class. */
    mode: z.literal('fixed'),
    pricePerGpuHour: z.record(GpuClassSchema, MinorUnitsSchema),
  }),
  z.strictObject({
    /** Providers bid; a bid below the reserve price is refused, the agreed price comes with the usage. */
    mode: z.literal('auction'),
    reservePricePerGpuHour: z.record(GpuClassSchema, MinorUnitsSchema),
  }),
]);

/** Who may join a subnet as a provider. */
export const SubnetMembershipSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('open') }),
  z.strictObject({ mode: z.literal('allowlist'), providers: z.array(EntityIdSchema).max(10_000) }),
]);

/**
 * A subnet's rules, set by its owner. Versioned: an update applies to jobs submitted after it; a
 * job keeps the version it was funded under.
 */
export const SubnetParametersSchema = z.strictObject({
  /** GPU classes the subnet runs jobs on. */
  gpuClasses: z.array(GpuClassSchema).min(1).max(64),
  pricing: SubnetPricingSchema,
  /** Usage is billed in whole multiples of this many seconds per GPU (rounded up). */
  billingIncrementSeconds: z.int().min(1).max(3600),
  /** Each provider of a job is billed at least this many seconds per GPU. */
  minimumChargeSeconds: z.int().min(0).max(86_400),
  /** The subnet's fee on top of the providers' charge, in basis points; goes to its treasury. */
  subnetFeeBps: z.int().min(0).max(5_000),
  /** Stake a provider locks to join. */
  providerMinStake: MinorUnitsSchema,
  /** Share of a provider's stake slashed per verified fault kind, in basis points (absent = 0). */
  slashing: z.partialRecord(FaultKindSchema, Bps),
  /** Time between a provider leaving and its stake being released (still slashable meanwhile). */
  unbondingSeconds: z
    .int()
    .min(0)
    .max(90 * 24 * 3600),
  membership: SubnetMembershipSchema,
});

/**
 * The terms a funded job is billed under: its subnet's parameters at the version it was funded
 * under, narrowed to the GPU classes it may run on, and the platform's fee at that time.
 */
export const JobTermsSchema = z.strictObject({
  pricing: SubnetPricingSchema,
  maxPricePerGpuHour: MinorUnitsSchema,
  billingIncrementSeconds: z.int().min(1),
  minimumChargeSeconds: z.int().min(0),
  subnetFeeBps: Bps,
  platformFeeBps: Bps,
  /** `escrow.low` is raised when the unaccrued escrow falls below this share of it. */
  lowEscrowBps: Bps,
  slashing: z.partialRecord(FaultKindSchema, Bps),
});

// ---------------------------------------------------------------------------------------------
// Requests through the gateway (events on the gateway's stream)

export const SubnetCreateRequested = defineEvent({
  type: 'subnet.create-requested',
  version: 1,
  subject: 'gateway.subnet.create-requested.v1',
  stream: GatewayStream.name,
  description: 'Someone asked to create a subnet, locking `stake` from their wallet.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    ownerId: EntityIdSchema,
    asset: AssetSchema,
    stake: MinorUnitsSchema,
    parameters: SubnetParametersSchema,
    requestedAt: TimestampSchema,
  }),
});

export const SubnetParametersUpdateRequested = defineEvent({
  type: 'subnet.parameters-update-requested',
  version: 1,
  subject: 'gateway.subnet.parameters-update-requested.v1',
  stream: GatewayStream.name,
  description: "A subnet's owner asked to change its parameters (a new version, for new jobs).",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    ownerId: EntityIdSchema,
    parameters: SubnetParametersSchema,
    requestedAt: TimestampSchema,
  }),
});

export const SubnetJoinRequested = defineEvent({
  type: 'subnet.join-requested',
  version: 1,
  subject: 'gateway.subnet.join-requested.v1',
  stream: GatewayStream.name,
  description: 'A provider asked to join a subnet, locking `stake` from its wallet.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    stake: MinorUnitsSchema,
    requestedAt: TimestampSchema,
  }),
});

export const SubnetLeaveRequested = defineEvent({
  type: 'subnet.leave-requested',
  version: 1,
  subject: 'gateway.subnet.leave-requested.v1',
  stream: GatewayStream.name,
  description: 'A provider asked to leave a subnet; its stake unbonds.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    requestedAt: TimestampSchema,
  }),
});

/** Which of an owner's accounts a withdrawal draws from. */
export const WithdrawalSourceSchema = z.enum(['wallet', 'payable']);

export const WithdrawalRequested = defineEvent({
  type: 'withdrawal.requested',
  version: 1,
  subject: 'gateway.withdrawal.requested.v1',
  stream: GatewayStream.name,
  description: 'An owner asked to move funds out to a chain address.',
  schema: z.strictObject({
    withdrawalId: EntityIdSchema,
    ownerId: EntityIdSchema,
    source: WithdrawalSourceSchema,
    asset: AssetSchema,
    amount: MinorUnitsSchema,
    /** The chain address (Cardano: bech32). */
    destination: z.string().min(1).max(256),
    requestedAt: TimestampSchema,
  }),
});

// ---------------------------------------------------------------------------------------------
// Escrow and settlement of jobs

export const JobFunded = defineEvent({
  type: 'job.funded',
  version: 1,
  subject: 'settlement.job.funded.v1',
  stream: SettlementStream.name,
  description: "The job's budget is held in escrow; it may be scheduled.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    subnetId: EntityIdSchema,
    /** The subnet parameters version the job is billed under. */
    subnetVersion: z.int().min(1),
    asset: AssetSchema,
    gpus: z.int().min(1),
    /** GPU classes the job may be placed on (accepted by the job and allowed by the subnet). */
    gpuClasses: z.array(GpuClassSchema).min(1),
    maxDurationSeconds: z.int().min(1),
    /** Total held: `maxCharge + subnetFee + platformFee`. */
    escrow: MinorUnitsSchema,
    /** Providers' charge at the maximum price for the maximum billable time. */
    maxCharge: MinorUnitsSchema,
    subnetFee: MinorUnitsSchema,
    platformFee: MinorUnitsSchema,
    terms: JobTermsSchema,
    fundedAt: TimestampSchema,
  }),
});

export const EscrowRejectionReasonSchema = z.enum([
  'insufficient-funds',
  'unknown-subnet',
  'subnet-closed',
  'asset-mismatch',
  'no-allowed-gpu-class',
  'price-below-subnet-price',
]);

export const EscrowRejected = defineEvent({
  type: 'escrow.rejected',
  version: 1,
  subject: 'settlement.escrow.rejected.v1',
  stream: SettlementStream.name,
  description: 'The job could not be funded; it is never scheduled.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    subnetId: EntityIdSchema,
    asset: AssetSchema,
    reason: EscrowRejectionReasonSchema,
    message: z.string().max(1024),
    /** The escrow the job needed, when it could be computed. */
    required: MinorUnitsSchema.nullable(),
    /** The tenant's available balance when the job was rejected for insufficient funds. */
    available: MinorUnitsSchema.nullable(),
    rejectedAt: TimestampSchema,
  }),
});

/** One provider's metered position in a job: cumulative figures. */
export const MeteredProviderSchema = z.strictObject({
  providerId: EntityIdSchema,
  gpuClass: GpuClassSchema,
  gpus: z.int().min(1),
  /** The highest reading seen. */
  gpuSecondsReported: z.int().min(0),
  /** GPU-seconds billed: increments and minimum charge applied, capped by the budget. */
  gpuSecondsBilled: z.int().min(0),
  pricePerGpuHour: MinorUnitsSchema,
  /** Cumulative amounts accrued (pending until the job settles). */
  charge: MinorUnitsSchema,
  subnetFee: MinorUnitsSchema,
  platformFee: MinorUnitsSchema,
});

export const UsageMetered = defineEvent({
  type: 'usage.metered',
  version: 1,
  subject: 'settlement.usage.metered.v1',
  stream: SettlementStream.name,
  description: 'Usage was priced and accrued as pending transfers from the escrow (cumulative figures).',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** The report's sequence number; 0 for the final readings of a terminal event. */
    seq: z.int().min(0),
    /** Providers whose figures changed with this report. */
    providers: z.array(MeteredProviderSchema).min(1),
    /** Accrued across all providers and fees so far. */
    accrued: MinorUnitsSchema,
    /** Escrow not yet accrued. */
    remaining: MinorUnitsSchema,
    meteredAt: TimestampSchema,
  }),
});

export const EscrowLow = defineEvent({
  type: 'escrow.low',
  version: 1,
  subject: 'settlement.escrow.low.v1',
  stream: SettlementStream.name,
  description: "A job's escrow fell below its low-water mark (raised once per job).",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    asset: AssetSchema,
    funded: MinorUnitsSchema,
    remaining: MinorUnitsSchema,
    thresholdBps: Bps,
    raisedAt: TimestampSchema,
  }),
});

export const EscrowExhausted = defineEvent({
  type: 'escrow.exhausted',
  version: 1,
  subject: 'settlement.escrow.exhausted.v1',
  stream: SettlementStream.name,
  description:
    'A job used more than its escrow covers; usage beyond it is not paid. Execution must stop the job.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    asset: AssetSchema,
    funded: MinorUnitsSchema,
    remaining: MinorUnitsSchema,
    /** Reported GPU-seconds the escrow could not cover, so far. */
    unbilledGpuSeconds: z.int().min(0),
    raisedAt: TimestampSchema,
  }),
});

export const JobOutcomeSchema = z.enum(['completed', 'failed', 'cancelled']);

export const JobSettled = defineEvent({
  type: 'job.settled',
  version: 1,
  subject: 'settlement.job.settled.v1',
  stream: SettlementStream.name,
  description:
    'Providers, subnet and platform were paid and the rest refunded: funded = paid + fees + refunded.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    subnetId: EntityIdSchema,
    asset: AssetSchema,
    outcome: JobOutcomeSchema,
    funded: MinorUnitsSchema,
    paidToProviders: MinorUnitsSchema,
    subnetFees: MinorUnitsSchema,
    platformFees: MinorUnitsSchema,
    refunded: MinorUnitsSchema,
    providers: z.array(
      z.strictObject({
        providerId: EntityIdSchema,
        gpuSecondsBilled: z.int().min(0),
        paid: MinorUnitsSchema,
        subnetFee: MinorUnitsSchema,
        platformFee: MinorUnitsSchema,
        /** Accrued for this provider but not paid, because of its fault. */
        forfeited: MinorUnitsSchema,
      }),
    ),
    settledAt: TimestampSchema,
  }),
});

// ---------------------------------------------------------------------------------------------
// Deposits and withdrawals

export const DepositConfirmed = defineEvent({
  type: 'deposit.confirmed',
  version: 1,
  subject: 'settlement.deposit.confirmed.v1',
  stream: SettlementStream.name,
  description: "A deposit reached its confirmations on chain and was credited to the owner's wallet.",
  schema: z.strictObject({
    depositId: z.string().min(1).max(200),
    asset: AssetSchema,
    ownerId: EntityIdSchema,
    amount: MinorUnitsSchema,
    /** The chain adapter that observed it (`simulated` in development and tests, `cardano`). */
    chain: z.string().min(1).max(64),
    chainTxId: z.string().min(1).max(128),
    confirmations: z.int().min(0),
    confirmedAt: TimestampSchema,
  }),
});

const WithdrawalFields = {
  withdrawalId: EntityIdSchema,
  ownerId: EntityIdSchema,
  source: WithdrawalSourceSchema,
  asset: AssetSchema,
  amount: MinorUnitsSchema,
};

export const WithdrawalHeld = defineEvent({
  type: 'withdrawal.held',
  version: 1,
  subject: 'settlement.withdrawal.held.v1',
  stream: SettlementStream.name,
  description: 'The amount is held (pending) and sent to the chain; it is posted on confirmation.',
  schema: z.strictObject({
    ...WithdrawalFields,
    destination: z.string().min(1).max(256),
    heldAt: TimestampSchema,
  }),
});

export const WithdrawalRejected = defineEvent({
  type: 'withdrawal.rejected',
  version: 1,
  subject: 'settlement.withdrawal.rejected.v1',
  stream: SettlementStream.name,
  description: 'The withdrawal exceeds the available balance; nothing was held.',
  schema: z.strictObject({
    ...WithdrawalFields,
    available: MinorUnitsSchema,
    rejectedAt: TimestampSchema,
  }),
});

export const WithdrawalCompleted = defineEvent({
  type: 'withdrawal.completed',
  version: 1,
  subject: 'settlement.withdrawal.completed.v1',
  stream: SettlementStream.name,
  description: 'The chain confirmed the withdrawal; the hold was posted.',
  schema: z.strictObject({
    ...WithdrawalFields,
    chainTxId: z.string().min(1).max(128),
    completedAt: TimestampSchema,
  }),
});

export const WithdrawalFailed = defineEvent({
  type: 'withdrawal.failed',
  version: 1,
  subject: 'settlement.withdrawal.failed.v1',
  stream: SettlementStream.name,
  description: 'The chain refused the withdrawal; the hold was voided and the funds are available again.',
  schema: z.strictObject({ ...WithdrawalFields, reason: z.string().max(1024), failedAt: TimestampSchema }),
});

// ---------------------------------------------------------------------------------------------
// Subnets and stake

export const SubnetCreated = defineEvent({
  type: 'subnet.created',
  version: 1,
  subject: 'settlement.subnet.created.v1',
  stream: SettlementStream.name,
  description: "A subnet exists; its owner's stake is locked. Parameters are version 1.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    ownerId: EntityIdSchema,
    asset: AssetSchema,
    stake: MinorUnitsSchema,
    parameters: SubnetParametersSchema,
    createdAt: TimestampSchema,
  }),
});

export const SubnetRequestRejected = defineEvent({
  type: 'subnet.request-rejected',
  version: 1,
  subject: 'settlement.subnet.request-rejected.v1',
  stream: SettlementStream.name,
  description: 'A subnet request (create, update, join, leave) was refused, with the reason.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    request: z.enum(['create', 'update-parameters', 'join', 'leave']),
    /** Who asked: the owner, or the provider. */
    requesterId: EntityIdSchema,
    reason: z.enum([
      'already-exists',
      'unknown-subnet',
      'not-owner',
      'insufficient-funds',
      'stake-below-minimum',
      'not-allowed',
      'already-member',
      'not-member',
      'invalid-parameters',
    ]),
    message: z.string().max(1024),
    rejectedAt: TimestampSchema,
  }),
});

export const SubnetParametersUpdated = defineEvent({
  type: 'subnet.parameters-updated',
  version: 1,
  subject: 'settlement.subnet.parameters-updated.v1',
  stream: SettlementStream.name,
  description: 'A new parameters version; it applies to jobs funded after it, never to running ones.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    version: z.int().min(2),
    parameters: SubnetParametersSchema,
    updatedAt: TimestampSchema,
  }),
});

export const SubnetProviderJoined = defineEvent({
  type: 'subnet.provider-joined',
  version: 1,
  subject: 'settlement.subnet.provider-joined.v1',
  stream: SettlementStream.name,
  description: 'A provider joined a subnet; its stake is locked.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    stake: MinorUnitsSchema,
    joinedAt: TimestampSchema,
  }),
});

export const SubnetProviderLeft = defineEvent({
  type: 'subnet.provider-left',
  version: 1,
  subject: 'settlement.subnet.provider-left.v1',
  stream: SettlementStream.name,
  description: 'A provider left; its stake unbonds until `unbondsAt` and can still be slashed until then.',
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    leftAt: TimestampSchema,
    unbondsAt: TimestampSchema,
  }),
});

export const SubnetStakeReleased = defineEvent({
  type: 'subnet.stake-released',
  version: 1,
  subject: 'settlement.subnet.stake-released.v1',
  stream: SettlementStream.name,
  description: "An unbonded provider's remaining stake went back to its wallet.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    amount: MinorUnitsSchema,
    releasedAt: TimestampSchema,
  }),
});

export const SubnetProviderSlashed = defineEvent({
  type: 'subnet.provider-slashed',
  version: 1,
  subject: 'settlement.subnet.provider-slashed.v1',
  stream: SettlementStream.name,
  description: "Part of a provider's stake went to the subnet's treasury for a verified fault (≤ the stake).",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    jobId: EntityIdSchema,
    kind: FaultKindSchema,
    amount: MinorUnitsSchema,
    stakeBefore: MinorUnitsSchema,
    slashedAt: TimestampSchema,
  }),
});

// ---------------------------------------------------------------------------------------------
// Reconciliation

export const ReconciliationMismatched = defineEvent({
  type: 'ledger.reconciliation-mismatched',
  version: 1,
  subject: 'settlement.ledger.reconciliation-mismatched.v1',
  stream: SettlementStream.name,
  description:
    "The ledger does not add up: an asset's accounts do not sum to zero, or custody on chain differs.",
  schema: z.strictObject({
    asset: AssetSchema,
    kind: z.enum(['ledger-unbalanced', 'custody-mismatch']),
    /** Ledger side: the sum of all accounts (unbalanced) or the chain clearing account's balance. */
    ledger: SignedMinorUnitsSchema,
    /** The chain adapter's custody balance (custody-mismatch), else 0. */
    custody: SignedMinorUnitsSchema,
    difference: SignedMinorUnitsSchema,
    chain: z.string().max(64),
    checkedAt: TimestampSchema,
  }),
});

// ---------------------------------------------------------------------------------------------
// Queries (core NATS request/reply)

/**
 * Account ids read `<asset>:<purpose>:<owner>`, e.g. `NTX:wallet:tenant-1`, `NTX:escrow:job-42`;
 * striped accounts (platform fees, subnet treasuries) add `#<stripe>`: `NTX:fees:platform#0a`.
 */
export const AccountIdSchema = z
  .string()
  .regex(
    /^[A-Z][A-Z0-9]{1,11}:[a-z]+:[A-Za-z0-9_@-]{1,260}(#[0-9a-f]{2})?$/,
    'must be an account id <asset>:<purpose>:<owner>',
  );

export const AccountPurposeSchema = z.enum([
  'wallet',
  'escrow',
  'payable',
  'treasury',
  'fees',
  'stake',
  'chain',
]);

export const AccountBalanceSchema = z.strictObject({
  accountId: AccountIdSchema,
  asset: AssetSchema,
  purpose: AccountPurposeSchema,
  ownerId: z.string(),
  debitsPending: MinorUnitsSchema,
  debitsPosted: MinorUnitsSchema,
  creditsPending: MinorUnitsSchema,
  creditsPosted: MinorUnitsSchema,
  /** Posted balance on the account's normal side (credits − debits; debits − credits for `chain`). */
  balance: SignedMinorUnitsSchema,
  /** `balance` less pending amounts leaving the account: what can be spent now. */
  available: SignedMinorUnitsSchema,
});

export const LedgerLegSchema = z.strictObject({
  transferId: z.string(),
  /** Order of recording in the ledger. */
  sequence: z.int().min(1),
  kind: z.enum(['posted', 'pending', 'post-pending', 'void-pending']),
  code: z.string(),
  debitAccountId: AccountIdSchema,
  creditAccountId: AccountIdSchema,
  amount: MinorUnitsSchema,
  pendingId: z.string().nullable(),
  jobId: z.string().nullable(),
  at: TimestampSchema,
});

export const SettlementBalancesQuery = defineQuery({
  name: 'settlement.balances',
  version: 1,
  description:
    "An owner's accounts (all purposes) or the given accounts, with posted, pending and available.",
  request: z
    .strictObject({
      ownerId: EntityIdSchema.optional(),
      accountIds: z.array(AccountIdSchema).max(500).optional(),
      asset: AssetSchema.optional(),
    })
    .refine((r) => r.ownerId !== undefined || (r.accountIds?.length ?? 0) > 0, 'give ownerId or accountIds'),
  response: z.strictObject({ accounts: z.array(AccountBalanceSchema) }),
});

export const AccountStatementQuery = defineQuery({
  name: 'settlement.account-statement',
  version: 1,
  description: "One account's entries in ledger order, a page at a time, with its balance.",
  request: z.strictObject({
    accountId: AccountIdSchema,
    /** Entries after this ledger sequence (paging). Default 0. */
    afterSequence: z.int().min(0).default(0),
    limit: z.int().min(1).max(1000).default(100),
  }),
  response: z.strictObject({
    account: AccountBalanceSchema.nullable(),
    entries: z.array(LedgerLegSchema.extend({ direction: z.enum(['debit', 'credit']) })),
    /** Pass as `afterSequence` for the next page; null when this was the last. */
    nextAfterSequence: z.int().nullable(),
  }),
});

export const JobStatementQuery = defineQuery({
  name: 'settlement.job-statement',
  version: 1,
  description: "A job's money: escrow, accruals, payments, fees, refund — and every ledger leg.",
  request: z.strictObject({ jobId: EntityIdSchema }),
  response: z.strictObject({
    jobId: EntityIdSchema,
    status: z.enum(['unknown', 'funded', 'rejected', 'settled']),
    tenantId: EntityIdSchema.nullable(),
    subnetId: EntityIdSchema.nullable(),
    asset: AssetSchema.nullable(),
    funded: MinorUnitsSchema,
    paidToProviders: MinorUnitsSchema,
    subnetFees: MinorUnitsSchema,
    platformFees: MinorUnitsSchema,
    refunded: MinorUnitsSchema,
    /** Accrued but not yet posted or voided. */
    pending: MinorUnitsSchema,
    /** Posted balance left in the job's escrow account. */
    escrowBalance: MinorUnitsSchema,
    legs: z.array(LedgerLegSchema),
  }),
});

export const SubnetEconomicsQuery = defineQuery({
  name: 'settlement.subnet-economics',
  version: 1,
  description: "A subnet's parameters, stake, treasury, members and settled volume.",
  request: z.strictObject({ subnetId: EntityIdSchema }),
  response: z.strictObject({
    subnetId: EntityIdSchema,
    exists: z.boolean(),
    ownerId: EntityIdSchema.nullable(),
    asset: AssetSchema.nullable(),
    version: z.int().min(0),
    parameters: SubnetParametersSchema.nullable(),
    ownerStake: MinorUnitsSchema,
    treasury: MinorUnitsSchema,
    providers: z.array(
      z.strictObject({
        providerId: EntityIdSchema,
        stake: MinorUnitsSchema,
        status: z.enum(['active', 'unbonding', 'released']),
        unbondsAt: TimestampSchema.nullable(),
        slashed: MinorUnitsSchema,
      }),
    ),
    totalProviderStake: MinorUnitsSchema,
    jobsSettled: z.int().min(0),
    paidToProviders: MinorUnitsSchema,
    subnetFees: MinorUnitsSchema,
  }),
});

/**
 * Development only: "someone sends `amount` to `ownerId`'s deposit address" on the **simulated**
 * chain, mined until confirmed and credited by a chain pass before the reply. Served only by a
 * settlement whose chain adapter is `simulated` (the demo, end-to-end tests, `gpunet account
 * deposit` against a development cluster); a real chain is deposited to with a wallet.
 */
export const SimulatedChainDepositRequest = defineQuery({
  name: 'settlement.simulated-chain.deposit',
  version: 1,
  description: 'Deposit on the simulated chain (development only), confirmed and credited before the reply.',
  request: z.strictObject({ ownerId: EntityIdSchema, asset: AssetSchema, amount: MinorUnitsSchema }),
  response: z.strictObject({
    chainTxId: z.string(),
    /** The owner's wallet balance after the credit (available, minor units). */
    available: MinorUnitsSchema,
  }),
});

/** Every message settlement defines, for registries. */
export const settlementMessages = [
  SubnetCreateRequested,
  SubnetParametersUpdateRequested,
  SubnetJoinRequested,
  SubnetLeaveRequested,
  WithdrawalRequested,
  JobFunded,
  EscrowRejected,
  UsageMetered,
  EscrowLow,
  EscrowExhausted,
  JobSettled,
  DepositConfirmed,
  WithdrawalHeld,
  WithdrawalRejected,
  WithdrawalCompleted,
  WithdrawalFailed,
  SubnetCreated,
  SubnetRequestRejected,
  SubnetParametersUpdated,
  SubnetProviderJoined,
  SubnetProviderLeft,
  SubnetStakeReleased,
  SubnetProviderSlashed,
  ReconciliationMismatched,
] as const;
