/*
 * Settlement's messages (docs/economy.md): escrow, metering, payouts, deposits and withdrawals,
 * subnets and stake, reconciliation, and the queries that read balances and statements. Requests
 * people make through the gateway (create a subnet, join it, withdraw) are events on the gateway's
 * stream; everything settlement decides is an event on its own stream.
 */

// Subnet parameters
export {
  DEFAULT_SLASHING_POLICY,
  SlashDestinationSchema,
  type SlashingPolicy,
  SlashingPolicySchema,
  type SubnetGovernance,
  SubnetGovernanceSchema,
  SubnetMembershipSchema,
  type SubnetParametersInput,
  SubnetParametersSchema,
  SubnetPricingSchema,
  type SubnetTrust,
  SubnetTrustSchema,
  DEFAULT_SUBNET_TRUST,
} from './subnet-parameters.schemas';

// Governance, delegation and slashing shapes
export {
  type ProposalChange,
  ProposalChangeSchema,
  ProposalIdSchema,
  type SlashEvidence,
  SlashEvidenceSchema,
  SlashIdSchema,
  type SlashShare,
  SlashShareSchema,
  VoteChoiceSchema,
} from './subnet-governance.schemas';

// Requests through the gateway (events on the gateway's stream)
export { SubnetDelegationRequested } from './subnet-delegation-requested.v1';
export { SubnetProposalRequested } from './subnet-proposal-requested.v1';
export { SubnetUndelegationRequested } from './subnet-undelegation-requested.v1';
export { SubnetVoteRequested } from './subnet-vote-requested.v1';
export { SubnetCreateRequested } from './subnet-create-requested.v1';
export { SubnetJoinRequested } from './subnet-join-requested.v1';
export { SubnetLeaveRequested } from './subnet-leave-requested.v1';
export { SubnetParametersUpdateRequested } from './subnet-parameters-update-requested.v1';
export { WithdrawalRequested } from './withdrawal-requested.v1';
export { WithdrawalSourceSchema } from './withdrawal.schemas';

// Escrow and settlement of jobs
export { EscrowExhausted } from './escrow-exhausted.v1';
export { EscrowLow } from './escrow-low.v1';
export { EscrowRejected, EscrowRejectionReasonSchema } from './escrow-rejected.v1';
export { JobFunded, JobTermsSchema } from './job-funded.v1';
export { JobOutcomeSchema, JobSettled } from './job-settled.v1';
export { MeteredProviderSchema, UsageMetered } from './usage-metered.v1';

// Deposits and withdrawals
export { DepositConfirmed } from './deposit-confirmed.v1';
export { WithdrawalCompleted } from './withdrawal-completed.v1';
export { WithdrawalFailed } from './withdrawal-failed.v1';
export { WithdrawalHeld } from './withdrawal-held.v1';
export { WithdrawalRejected } from './withdrawal-rejected.v1';

// Subnets and stake
export { SubnetCreated } from './subnet-created.v1';
export { SubnetParametersUpdated } from './subnet-parameters-updated.v1';
export { SubnetProviderJoined } from './subnet-provider-joined.v1';
export { SubnetProviderLeft } from './subnet-provider-left.v1';
export { SubnetProviderSlashed } from './subnet-provider-slashed.v1';
export { SubnetRequestRejected } from './subnet-request-rejected.v1';
export { SubnetStakeReleased } from './subnet-stake-released.v1';
export { SubnetDelegated } from './subnet-delegated.v1';
export { SubnetDelegationReleased } from './subnet-delegation-released.v1';
export {
  type MemberStanding,
  MemberStandingSchema,
  SubnetMemberStandingChanged,
} from './subnet-member-standing-changed.v1';
export { SubnetProposalDecided } from './subnet-proposal-decided.v1';
export { SubnetProposalOpened } from './subnet-proposal-opened.v1';
export { SubnetSlashOverturned } from './subnet-slash-overturned.v1';
export { SubnetSlashProposed } from './subnet-slash-proposed.v1';
export { SubnetUndelegated } from './subnet-undelegated.v1';
export { SubnetVoteCast } from './subnet-vote-cast.v1';

// Reconciliation
export { ReconciliationMismatched } from './ledger-reconciliation-mismatched.v1';

// Queries (core NATS request/reply)
export {
  AccountBalanceSchema,
  AccountIdSchema,
  AccountPurposeSchema,
  LedgerLegSchema,
} from './ledger.schemas';
export { AccountStatementQuery } from './settlement-account-statement.v1';
export { SettlementBalancesQuery } from './settlement-balances.v1';
export { JobStatementQuery } from './settlement-job-statement.v1';
export { SimulatedChainDepositRequest } from './settlement-simulated-chain-deposit.v1';
export {
  DelegationViewSchema,
  ProposalViewSchema,
  SlashViewSchema,
  SubnetEconomicsQuery,
  SubnetHealthSchema,
} from './settlement-subnet-economics.v1';

export { settlementMessages } from './settlement.messages';
