import { DepositConfirmed } from './deposit-confirmed.v1';
import { EscrowExhausted } from './escrow-exhausted.v1';
import { EscrowLow } from './escrow-low.v1';
import { EscrowRejected } from './escrow-rejected.v1';
import { JobFunded } from './job-funded.v1';
import { JobSettled } from './job-settled.v1';
import { ReconciliationMismatched } from './ledger-reconciliation-mismatched.v1';
import { SubnetCreateRequested } from './subnet-create-requested.v1';
import { SubnetCreated } from './subnet-created.v1';
import { SubnetJoinRequested } from './subnet-join-requested.v1';
import { SubnetLeaveRequested } from './subnet-leave-requested.v1';
import { SubnetParametersUpdateRequested } from './subnet-parameters-update-requested.v1';
import { SubnetParametersUpdated } from './subnet-parameters-updated.v1';
import { SubnetProviderJoined } from './subnet-provider-joined.v1';
import { SubnetProviderLeft } from './subnet-provider-left.v1';
import { SubnetProviderSlashed } from './subnet-provider-slashed.v1';
import { SubnetRequestRejected } from './subnet-request-rejected.v1';
import { SubnetStakeReleased } from './subnet-stake-released.v1';
import { SubnetDelegated } from './subnet-delegated.v1';
import { SubnetDelegationReleased } from './subnet-delegation-released.v1';
import { SubnetDelegationRequested } from './subnet-delegation-requested.v1';
import { SubnetMemberStandingChanged } from './subnet-member-standing-changed.v1';
import { SubnetProposalDecided } from './subnet-proposal-decided.v1';
import { SubnetProposalOpened } from './subnet-proposal-opened.v1';
import { SubnetProposalRequested } from './subnet-proposal-requested.v1';
import { SubnetSlashOverturned } from './subnet-slash-overturned.v1';
import { SubnetSlashProposed } from './subnet-slash-proposed.v1';
import { SubnetUndelegated } from './subnet-undelegated.v1';
import { SubnetUndelegationRequested } from './subnet-undelegation-requested.v1';
import { SubnetVoteCast } from './subnet-vote-cast.v1';
import { SubnetVoteRequested } from './subnet-vote-requested.v1';
import { UsageMetered } from './usage-metered.v1';
import { WithdrawalCompleted } from './withdrawal-completed.v1';
import { WithdrawalFailed } from './withdrawal-failed.v1';
import { WithdrawalHeld } from './withdrawal-held.v1';
import { WithdrawalRejected } from './withdrawal-rejected.v1';
import { WithdrawalRequested } from './withdrawal-requested.v1';

/** Every message settlement defines, for registries. */
export const settlementMessages = [
  SubnetCreateRequested,
  SubnetParametersUpdateRequested,
  SubnetJoinRequested,
  SubnetLeaveRequested,
  SubnetProposalRequested,
  SubnetVoteRequested,
  SubnetDelegationRequested,
  SubnetUndelegationRequested,
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
  SubnetProposalOpened,
  SubnetVoteCast,
  SubnetProposalDecided,
  SubnetDelegated,
  SubnetUndelegated,
  SubnetDelegationReleased,
  SubnetSlashProposed,
  SubnetSlashOverturned,
  SubnetMemberStandingChanged,
  ReconciliationMismatched,
] as const;
