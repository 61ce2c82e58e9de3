import {
  type Decider,
  type DomainEvent,
  type PayloadOf,
  type SlashEvidence,
  type SlashingPolicy,
  type SubnetCreated,
  type SubnetCreateRequested,
  type SubnetDelegated,
  type SubnetDelegationReleased,
  type SubnetDelegationRequested,
  type SubnetMemberStandingChanged,
  type SubnetParametersUpdated,
  type SubnetProposalDecided,
  type SubnetProposalOpened,
  type SubnetProposalRequested,
  type SubnetProviderJoined,
  type SubnetProviderLeft,
  type SubnetProviderSlashed,
  type SubnetRequestRejected,
  type SubnetSlashOverturned,
  type SubnetSlashProposed,
  type SubnetStakeReleased,
  type SubnetUndelegated,
  type SubnetUndelegationRequested,
  type SubnetVoteCast,
  type SubnetVoteRequested,
} from '@gpunet/contracts';
import { BPS_DENOMINATOR, minor, toWire } from '../money';
import type { SubnetParameters } from '../job/job-settlement.decider';
import { listPrice } from '../job/pricing';
import { electorateOf, slashSharesOf, standingOf, votingWeightOf } from './subnet-rules';
import {
  type Delegation,
  delegationKey,
  type Member,
  type Proposal,
  type Slash,
  type SubnetState,
} from './subnet-state';

export type { Delegation, FaultKind, Member, Proposal, Slash, SubnetState } from './subnet-state';

/*
 * A subnet's economy (stream `subnet-<id>`, ADR 0071): created by locking its owner's stake;
 * parameters versioned (a job keeps the version it was funded under), changed by the owner or by a
 * stake vote; providers join by locking stake and leave through an unbonding period during which
 * they can still be slashed; holders delegate stake to providers; evidence becomes a slash held on
 * the stakes until its appeal window closes; each member's standing is announced when it changes.
 * Time-driven steps (closing votes, applying changes, taking slashes, releasing stake) happen on
 * `Tick`, which the chain pass sends.
 */

export type SubnetEvent =
  | DomainEvent<'subnet.created', PayloadOf<typeof SubnetCreated>>
  | DomainEvent<'subnet.request-rejected', PayloadOf<typeof SubnetRequestRejected>>
  | DomainEvent<'subnet.parameters-updated', PayloadOf<typeof SubnetParametersUpdated>>
  | DomainEvent<'subnet.provider-joined', PayloadOf<typeof SubnetProviderJoined>>
  | DomainEvent<'subnet.provider-left', PayloadOf<typeof SubnetProviderLeft>>
  | DomainEvent<'subnet.stake-released', PayloadOf<typeof SubnetStakeReleased>>
  | DomainEvent<'subnet.provider-slashed', PayloadOf<typeof SubnetProviderSlashed>>
  | DomainEvent<'subnet.slash-proposed', PayloadOf<typeof SubnetSlashProposed>>
  | DomainEvent<'subnet.slash-overturned', PayloadOf<typeof SubnetSlashOverturned>>
  | DomainEvent<'subnet.member-standing-changed', PayloadOf<typeof SubnetMemberStandingChanged>>
  | DomainEvent<'subnet.proposal-opened', PayloadOf<typeof SubnetProposalOpened>>
  | DomainEvent<'subnet.vote-cast', PayloadOf<typeof SubnetVoteCast>>
  | DomainEvent<'subnet.proposal-decided', PayloadOf<typeof SubnetProposalDecided>>
  | DomainEvent<'subnet.delegated', PayloadOf<typeof SubnetDelegated>>
  | DomainEvent<'subnet.undelegated', PayloadOf<typeof SubnetUndelegated>>
  | DomainEvent<'subnet.delegation-released', PayloadOf<typeof SubnetDelegationReleased>>;

export type SubnetCommand =
  | {
      readonly type: 'CreateSubnet';
      readonly request: PayloadOf<typeof SubnetCreateRequested>;
      /** The owner wallet's available balance (read under lock). */
      readonly available: bigint;
      /** The platform's minimum creation stake. */
      readonly minCreationStake: bigint;
      /** Assets that settle no real value (settlement's configuration). */
      readonly testAssets: readonly string[];
      readonly at: string;
    }
  | {
      readonly type: 'UpdateParameters';
      readonly subnetId: string;
      readonly ownerId: string;
      readonly parameters: SubnetParameters;
      /** Assets that settle no real value (settlement's configuration). */
      readonly testAssets: readonly string[];
      readonly at: string;
    }
  | {
      readonly type: 'JoinSubnet';
      readonly subnetId: string;
      readonly providerId: string;
      readonly stake: bigint;
      readonly available: bigint;
      readonly at: string;
    }
  | {
      readonly type: 'LeaveSubnet';
      readonly subnetId: string;
      readonly providerId: string;
      readonly at: string;
    }
  | {
      readonly type: 'Propose';
      readonly request: PayloadOf<typeof SubnetProposalRequested>;
      readonly testAssets: readonly string[];
      readonly at: string;
    }
  | { readonly type: 'Vote'; readonly request: PayloadOf<typeof SubnetVoteRequested>; readonly at: string }
  | {
      readonly type: 'Delegate';
      readonly request: PayloadOf<typeof SubnetDelegationRequested>;
      /** The delegator wallet's available balance (read under lock). */
      readonly available: bigint;
      readonly at: string;
    }
  | {
      readonly type: 'Undelegate';
      readonly request: PayloadOf<typeof SubnetUndelegationRequested>;
      readonly at: string;
    }
  | {
      readonly type: 'ProposeSlash';
      /** Derived from the evidence (`slashIdOf`): the same evidence is one slash. */
      readonly slashId: string;
      readonly providerId: string;
      readonly evidence: SlashEvidence;
      /** The slashing table's share for the kind (the job's pinned one, or the subnet's current). */
      readonly bps: number;
      readonly policy: SlashingPolicy;
      /** The harmed tenant, for `refund-tenant`; null: the treasury takes it. */
      readonly beneficiaryId: string | null;
      readonly at: string;
    }
  /** The time-driven steps, due by `at`: the chain pass sends it to every subnet. */
  | { readonly type: 'Tick'; readonly at: string };

type Existing = Extract<SubnetState, { exists: true }>;
type Rejection = PayloadOf<typeof SubnetRequestRejected>;

const rejected = (
  subnetId: string,
  request: Rejection['request'],
  requesterId: string,
  reason: Rejection['reason'],
  message: string,
  at: string,
): SubnetEvent[] => [
  {
    type: 'subnet.request-rejected',
    data: { subnetId, request, requesterId, reason, message, rejectedAt: at },
  },
];

const assetList = (assets: readonly string[]): string => (assets.length === 0 ? 'none' : assets.join(', '));

/**
 * Parameters a subnet cannot run on: a GPU class without a price, or simulated GPUs or host-process
 * edges allowed while the subnet's asset settles real value (only an asset in `testAssets` holds
 * none). Simulated GPUs are declared, never challenged: paying real money for them would pay for
 * work nobody can check. Host processes run a stranger's code unsandboxed on the provider's host
 * (ADR 0072): acceptable for the demo and development, never for jobs that settle real value.
 */
export const parametersProblem = (
  p: SubnetParameters,
  asset: string,
  testAssets: readonly string[],
): string | null => {
  const unpriced = p.gpuClasses.filter((c) => listPrice(p, c) === undefined);
  if (unpriced.length > 0) return `GPU classes without a price: ${unpriced.join(', ')}`;
  if (new Set(p.gpuClasses).size !== p.gpuClasses.length) return 'GPU classes are listed twice';
  if (p.trust.simulatedGpus === 'allowed' && !testAssets.includes(asset))
    return `parameters.trust.simulatedGpus: 'allowed' only in a subnet whose asset settles no real value; ${asset} does (test assets: ${assetList(testAssets)})`;
  if (p.trust.minimumIsolation === 'host-process' && !testAssets.includes(asset))
    return `parameters.trust.minimumIsolation: 'host-process' only in a subnet whose asset settles no real value; ${asset} does (test assets: ${assetList(testAssets)})`;
  return null;
};

const plusSeconds = (at: string, seconds: number): string =>
  new Date(Date.parse(at) + seconds * 1000).toISOString();
const due = (when: string | null, at: string): boolean => when !== null && Date.parse(when) <= Date.parse(at);
const byKey =
  <T>(...keys: ((x: T) => string)[]) =>
  (a: T, b: T): number => {
    for (const key of keys) {
      const [x, y] = [key(a), key(b)];
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
const timeKey = (at: string): string => new Date(at).toISOString();

/**
 * Events of one decision, each folded as it is added: later steps of a decision see the earlier
 * ones (a slash taken before the stake is released, a parameters change before the standings).
 */
class Decision {
  readonly events: SubnetEvent[] = [];
  constructor(public state: SubnetState) {}

  get subnet(): Existing {
    if (!this.state.exists) throw new Error('a decision on a subnet that does not exist');
    return this.state;
  }

  emit(...events: SubnetEvent[]): this {
    for (const e of events) {
      this.events.push(e);
      this.state = evolve(this.state, e);
    }
    return this;
  }

  /** A standing event for every member whose standing is not the one last announced. */
  standings(at: string): SubnetEvent[] {
    const s = this.subnet;
    for (const m of [...s.members.values()].sort(byKey((x) => x.providerId))) {
      const standing = standingOf(s, m, at);
      if (standing === m.standing) continue;
      this.emit({
        type: 'subnet.member-standing-changed',
        data: {
          subnetId: s.subnetId,
          providerId: m.providerId,
          standing,
          stake: toWire(m.stake),
          minStake: s.parameters.providerMinStake,
          jailedUntil: standing === 'jailed' ? m.jailedUntil : null,
          changedAt: at,
        },
      });
    }
    return this.events;
  }
}

const decide = (command: SubnetCommand, state: SubnetState): SubnetEvent[] => {
  switch (command.type) {
    case 'CreateSubnet': {
      const r = command.request;
      if (state.exists) {
        // The same request again is a redelivery; anyone else's is a name clash.
        return state.ownerId === r.ownerId
          ? []
          : rejected(
              r.subnetId,
              'create',
              r.ownerId,
              'already-exists',
              `subnet ${r.subnetId} exists`,
              command.at,
            );
      }
      const problem = parametersProblem(r.parameters, r.asset, command.testAssets);
      if (problem)
        return rejected(r.subnetId, 'create', r.ownerId, 'invalid-parameters', problem, command.at);
      const stake = minor(r.stake);
      if (stake < command.minCreationStake)
        return rejected(
          r.subnetId,
          'create',
          r.ownerId,
          'stake-below-minimum',
          `creating a subnet locks at least ${command.minCreationStake}`,
          command.at,
        );
      if (command.available < stake)
        return rejected(
          r.subnetId,
          'create',
          r.ownerId,
          'insufficient-funds',
          `stake ${stake} exceeds the available ${command.available}`,
          command.at,
        );
      return [
        {
          type: 'subnet.created',
          data: {
            subnetId: r.subnetId,
            ownerId: r.ownerId,
            asset: r.asset,
            stake: r.stake,
            parameters: r.parameters,
            createdAt: command.at,
          },
        },
      ];
    }
    case 'UpdateParameters': {
      const reject = (reason: Rejection['reason'], message: string) =>
        rejected(command.subnetId, 'update-parameters', command.ownerId, reason, message, command.at);
      if (!state.exists) return reject('unknown-subnet', 'no such subnet');
      if (state.ownerId !== command.ownerId) return reject('not-owner', 'only the owner updates a subnet');
      if (state.parameters.governance.mode === 'stake-vote')
        return reject('governance-mode', 'a stake-vote subnet changes its parameters by proposal only');
      const problem = parametersProblem(command.parameters, state.asset, command.testAssets);
      if (problem) return reject('invalid-parameters', problem);
      return new Decision(state)
        .emit({
          type: 'subnet.parameters-updated',
          data: {
            subnetId: state.subnetId,
            version: state.version + 1,
            parameters: command.parameters,
            updatedAt: command.at,
          },
        })
        .standings(command.at);
    }
    case 'JoinSubnet': {
      const { subnetId, providerId } = command;
      if (!state.exists)
        return rejected(subnetId, 'join', providerId, 'unknown-subnet', 'no such subnet', command.at);
      const member = state.members.get(providerId);
      if (member?.status === 'active') return []; // a redelivered join
      if (member?.status === 'unbonding')
        return rejected(
          subnetId,
          'join',
          providerId,
          'already-member',
          'still unbonding from this subnet',
          command.at,
        );
      const rules = state.parameters.membership;
      if (rules.mode === 'allowlist' && !rules.providers.includes(providerId))
        return rejected(
          subnetId,
          'join',
          providerId,
          'not-allowed',
          'not on the subnet allowlist',
          command.at,
        );
      const minimum = minor(state.parameters.providerMinStake);
      if (command.stake < minimum)
        return rejected(
          subnetId,
          'join',
          providerId,
          'stake-below-minimum',
          `the minimum stake is ${minimum}`,
          command.at,
        );
      if (command.available < command.stake)
        return rejected(
          subnetId,
          'join',
          providerId,
          'insufficient-funds',
          `stake ${command.stake} exceeds the available ${command.available}`,
          command.at,
        );
      return new Decision(state)
        .emit({
          type: 'subnet.provider-joined',
          data: { subnetId, providerId, stake: toWire(command.stake), joinedAt: command.at },
        })
        .standings(command.at);
    }
    case 'LeaveSubnet': {
      const { subnetId, providerId } = command;
      if (!state.exists)
        return rejected(subnetId, 'leave', providerId, 'unknown-subnet', 'no such subnet', command.at);
      const member = state.members.get(providerId);
      if (member?.status === 'unbonding') return []; // a redelivered leave
      if (member?.status !== 'active')
        return rejected(
          subnetId,
          'leave',
          providerId,
          'not-member',
          'not a member of this subnet',
          command.at,
        );
      return new Decision(state)
        .emit({
          type: 'subnet.provider-left',
          data: {
            subnetId,
            providerId,
            leftAt: command.at,
            unbondsAt: plusSeconds(command.at, state.parameters.unbondingSeconds),
          },
        })
        .standings(command.at);
    }
    case 'Propose':
      return propose(command, state);
    case 'Vote':
      return vote(command, state);
    case 'Delegate':
      return delegate(command, state);
    case 'Undelegate': {
      const { subnetId, delegatorId, providerId } = command.request;
      const reject = (reason: Rejection['reason'], message: string) =>
        rejected(subnetId, 'undelegate', delegatorId, reason, message, command.at);
      if (!state.exists) return reject('unknown-subnet', 'no such subnet');
      const delegation = state.delegations.get(delegationKey(delegatorId, providerId));
      if (delegation?.status === 'unbonding') return []; // a redelivered undelegation
      if (delegation?.status !== 'active')
        return reject('not-delegated', `${delegatorId} delegates nothing to ${providerId}`);
      return [
        {
          type: 'subnet.undelegated',
          data: {
            subnetId,
            delegatorId,
            providerId,
            amount: toWire(delegation.amount),
            undelegatedAt: command.at,
            unbondsAt: plusSeconds(command.at, state.parameters.unbondingSeconds),
          },
        },
      ];
    }
    case 'ProposeSlash':
      return proposeSlash(command, state);
    case 'Tick':
      return state.exists ? tick(new Decision(state), command.at) : [];
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
};

const propose = (command: Extract<SubnetCommand, { type: 'Propose' }>, state: SubnetState): SubnetEvent[] => {
  const r = command.request;
  const { at } = command;
  const reject = (reason: Rejection['reason'], message: string) =>
    rejected(r.subnetId, 'propose', r.proposerId, reason, message, at);
  if (!state.exists) return reject('unknown-subnet', 'no such subnet');
  const existing = state.proposals.get(r.proposalId);
  if (existing)
    // The same proposal again is a redelivery; another under its id is a clash.
    return existing.proposerId === r.proposerId &&
      JSON.stringify(existing.change) === JSON.stringify(r.change)
      ? []
      : reject('proposal-exists', `proposal ${r.proposalId} exists`);
  const governance = state.parameters.governance;
  const opened = (
    electorate: bigint,
    decidedBy: 'stake-vote' | 'owner',
    votingEndsAt: string,
  ): SubnetEvent[] => [
    {
      type: 'subnet.proposal-opened',
      data: {
        subnetId: r.subnetId,
        proposalId: r.proposalId,
        proposerId: r.proposerId,
        title: r.title,
        change: r.change,
        electorate: toWire(electorate),
        decidedBy,
        votingEndsAt,
        openedAt: at,
      },
    },
  ];
  if (r.change.kind === 'parameters') {
    if (governance.mode !== 'stake-vote')
      return reject(
        'governance-mode',
        'an owner-governed subnet takes no parameter proposals; its owner updates it',
      );
    if (votingWeightOf(state, r.proposerId) === 0n)
      return reject('not-a-voter', `${r.proposerId} holds no voting stake in ${r.subnetId}`);
    const problem = parametersProblem(r.change.parameters, state.asset, command.testAssets);
    if (problem) return reject('invalid-parameters', problem);
    return opened(electorateOf(state), 'stake-vote', plusSeconds(at, governance.votingSeconds));
  }
  const slash = state.slashes.get(r.change.slashId);
  if (!slash) return reject('unknown-slash', `no slash ${r.change.slashId} in ${r.subnetId}`);
  if (slash.providerId !== r.proposerId)
    return reject(
      'not-allowed',
      `only ${slash.providerId}, the slashed provider, appeals slash ${slash.slashId}`,
    );
  const appeal = slash.appealProposalId === null ? undefined : state.proposals.get(slash.appealProposalId);
  if (appeal?.status === 'open')
    return reject('proposal-exists', `slash ${slash.slashId} is already appealed (${appeal.proposalId})`);
  if (slash.status !== 'held' || appeal !== undefined || Date.parse(at) >= Date.parse(slash.appealUntil))
    return reject(
      'appeal-closed',
      `slash ${slash.slashId} is ${slash.status}${appeal ? ', its appeal decided' : ''}; appeals closed at ${slash.appealUntil}`,
    );
  return governance.mode === 'stake-vote'
    ? opened(electorateOf(state), 'stake-vote', plusSeconds(at, governance.votingSeconds))
    : opened(state.ownerStake, 'owner', slash.appealUntil);
};

const vote = (command: Extract<SubnetCommand, { type: 'Vote' }>, state: SubnetState): SubnetEvent[] => {
  const r = command.request;
  const { at } = command;
  const reject = (reason: Rejection['reason'], message: string) =>
    rejected(r.subnetId, 'vote', r.voterId, reason, message, at);
  if (!state.exists) return reject('unknown-subnet', 'no such subnet');
  const proposal = state.proposals.get(r.proposalId);
  if (!proposal) return reject('unknown-proposal', `no proposal ${r.proposalId} in ${r.subnetId}`);
  if (proposal.status !== 'open' || Date.parse(at) >= Date.parse(proposal.votingEndsAt))
    return reject('voting-closed', `voting on ${r.proposalId} closed at ${proposal.votingEndsAt}`);
  const weight =
    proposal.decidedBy === 'owner'
      ? r.voterId === state.ownerId
        ? state.ownerStake
        : 0n
      : votingWeightOf(state, r.voterId);
  if (weight === 0n)
    return reject(
      'not-a-voter',
      proposal.decidedBy === 'owner'
        ? `only the owner decides appeals in ${r.subnetId}`
        : `${r.voterId} holds no voting stake in ${r.subnetId}`,
    );
  const before = proposal.votes.get(r.voterId);
  if (before?.choice === r.choice && before.weight === weight) return []; // nothing changes
  return [
    {
      type: 'subnet.vote-cast',
      data: {
        subnetId: r.subnetId,
        proposalId: r.proposalId,
        voterId: r.voterId,
        choice: r.choice,
        weight: toWire(weight),
        castAt: at,
      },
    },
  ];
};

const delegate = (
  command: Extract<SubnetCommand, { type: 'Delegate' }>,
  state: SubnetState,
): SubnetEvent[] => {
  const { subnetId, delegatorId, providerId, amount } = command.request;
  const reject = (reason: Rejection['reason'], message: string) =>
    rejected(subnetId, 'delegate', delegatorId, reason, message, command.at);
  if (!state.exists) return reject('unknown-subnet', 'no such subnet');
  if (state.members.get(providerId)?.status !== 'active')
    return reject('not-member', `${providerId} is not an active provider of ${subnetId}`);
  const delegation = state.delegations.get(delegationKey(delegatorId, providerId));
  if (delegation?.status === 'unbonding')
    return reject('already-member', `the delegation to ${providerId} is still unbonding`);
  const wanted = minor(amount);
  if (wanted === 0n) return reject('invalid-parameters', 'amount: must be more than 0');
  if (command.available < wanted)
    return reject('insufficient-funds', `amount ${wanted} exceeds the available ${command.available}`);
  const total = (delegation?.status === 'active' ? delegation.amount : 0n) + wanted;
  return [
    {
      type: 'subnet.delegated',
      data: { subnetId, delegatorId, providerId, amount, total: toWire(total), delegatedAt: command.at },
    },
  ];
};

const proposeSlash = (
  command: Extract<SubnetCommand, { type: 'ProposeSlash' }>,
  state: SubnetState,
): SubnetEvent[] => {
  if (!state.exists || state.slashes.has(command.slashId)) return [];
  const member = state.members.get(command.providerId);
  if (!member || member.status === 'released' || command.bps <= 0) return [];
  const { amount, shares } = slashSharesOf(state, command.providerId, command.bps);
  if (amount === 0n) return [];
  const { at, policy } = command;
  const decision = new Decision(state).emit({
    type: 'subnet.slash-proposed',
    data: {
      subnetId: state.subnetId,
      slashId: command.slashId,
      providerId: command.providerId,
      evidence: command.evidence,
      bps: command.bps,
      amount: toWire(amount),
      shares,
      destination: policy.destination,
      beneficiaryId: policy.destination === 'refund-tenant' ? command.beneficiaryId : null,
      appealUntil: plusSeconds(at, policy.appealSeconds),
      jailedUntil: plusSeconds(at, policy.jailSeconds),
      proposedAt: at,
    },
  });
  // No appeal window: taken in the same decision.
  if (policy.appealSeconds === 0)
    decision.emit(taken(decision.subnet, decision.subnet.slashes.get(command.slashId)!, at));
  return decision.standings(at);
};

const taken = (state: Existing, slash: Slash, at: string): SubnetEvent => ({
  type: 'subnet.provider-slashed',
  data: {
    subnetId: state.subnetId,
    providerId: slash.providerId,
    jobId: slash.evidence.jobId,
    kind: slash.evidence.kind,
    amount: toWire(slash.amount),
    stakeBefore: toWire(state.members.get(slash.providerId)?.stake ?? 0n),
    slashedAt: at,
    slashId: slash.slashId,
    shares: slash.shares,
    destination: slash.destination,
    beneficiaryId: slash.beneficiaryId,
  },
});

/** Whether a closed proposal passed, and why (the owner's vote alone for an owner-decided appeal). */
const outcomeOf = (
  state: Existing,
  p: Proposal,
  tally: { yes: bigint; no: bigint; abstain: bigint },
): PayloadOf<typeof SubnetProposalDecided>['reason'] => {
  if (p.change.kind === 'parameters' && state.parameters.governance.mode !== 'stake-vote')
    return 'superseded';
  if (p.change.kind === 'overturn-slash' && state.slashes.get(p.change.slashId)?.status !== 'held')
    return 'superseded';
  if (p.rules === null) {
    const owner = p.votes.get(state.ownerId);
    if (!owner) return 'quorum-not-met';
    return owner.choice === 'yes' ? 'threshold-met' : 'threshold-not-met';
  }
  const cast = tally.yes + tally.no + tally.abstain;
  if (cast * BPS_DENOMINATOR < BigInt(p.rules.quorumBps) * p.electorate) return 'quorum-not-met';
  const decisive = tally.yes + tally.no;
  return decisive > 0n && tally.yes * BPS_DENOMINATOR >= BigInt(p.rules.thresholdBps) * decisive
    ? 'threshold-met'
    : 'threshold-not-met';
};

/**
 * Everything due by `at`, in order: close the proposals whose vote ended, apply the passed ones
 * whose time came (a parameters version, an overturned slash), take the held slashes whose appeal
 * window closed with no appeal open, release unbonded stake and delegations no slash holds any
 * more, and announce the standings that changed (a jail that ended, a new minimum).
 */
const tick = (d: Decision, at: string): SubnetEvent[] => {
  const closing = [...d.subnet.proposals.values()]
    .filter((p) => p.status === 'open' && due(p.votingEndsAt, at))
    .sort(
      byKey(
        (p) => timeKey(p.votingEndsAt),
        (p) => p.proposalId,
      ),
    );
  for (const p of closing) {
    const tally = { yes: 0n, no: 0n, abstain: 0n };
    for (const v of p.votes.values()) tally[v.choice] += v.weight;
    const reason = outcomeOf(d.subnet, p, tally);
    const passed = reason === 'threshold-met';
    const delay = p.change.kind === 'parameters' && p.rules ? p.rules.delaySeconds : 0;
    d.emit({
      type: 'subnet.proposal-decided',
      data: {
        subnetId: d.subnet.subnetId,
        proposalId: p.proposalId,
        outcome: passed ? 'passed' : 'rejected',
        reason,
        yes: toWire(tally.yes),
        no: toWire(tally.no),
        abstain: toWire(tally.abstain),
        electorate: toWire(p.electorate),
        takesEffectAt: passed ? plusSeconds(p.votingEndsAt, delay) : null,
        decidedAt: at,
      },
    });
  }
  const applying = [...d.subnet.proposals.values()]
    .filter((p) => p.status === 'passed' && due(p.decision?.takesEffectAt ?? null, at))
    .sort(
      byKey(
        (p) => timeKey(p.decision!.takesEffectAt!),
        (p) => p.proposalId,
      ),
    );
  for (const p of applying) {
    const s = d.subnet;
    if (p.change.kind === 'parameters')
      d.emit({
        type: 'subnet.parameters-updated',
        data: {
          subnetId: s.subnetId,
          version: s.version + 1,
          parameters: p.change.parameters,
          updatedAt: at,
          proposalId: p.proposalId,
        },
      });
    else {
      const slash = s.slashes.get(p.change.slashId);
      if (slash?.status === 'held')
        d.emit({
          type: 'subnet.slash-overturned',
          data: {
            subnetId: s.subnetId,
            slashId: slash.slashId,
            providerId: slash.providerId,
            proposalId: p.proposalId,
            overturnedAt: at,
          },
        });
    }
  }
  const taking = [...d.subnet.slashes.values()]
    .filter((x) => x.status === 'held' && due(x.appealUntil, at))
    .filter(
      (x) => x.appealProposalId === null || d.subnet.proposals.get(x.appealProposalId)?.status === 'rejected',
    )
    .sort(
      byKey(
        (x) => timeKey(x.appealUntil),
        (x) => x.slashId,
      ),
    );
  for (const slash of taking) d.emit(taken(d.subnet, slash, at));
  const s = d.subnet;
  for (const m of [...s.members.values()].sort(byKey((x) => x.providerId)))
    if (m.status === 'unbonding' && due(m.unbondsAt, at) && m.held === 0n)
      d.emit({
        type: 'subnet.stake-released',
        data: { subnetId: s.subnetId, providerId: m.providerId, amount: toWire(m.stake), releasedAt: at },
      });
  for (const x of [...s.delegations.values()].sort(
    byKey(
      (y) => y.delegatorId,
      (y) => y.providerId,
    ),
  ))
    if (x.status === 'unbonding' && due(x.unbondsAt, at) && x.held === 0n)
      d.emit({
        type: 'subnet.delegation-released',
        data: {
          subnetId: s.subnetId,
          delegatorId: x.delegatorId,
          providerId: x.providerId,
          amount: toWire(x.amount),
          releasedAt: at,
        },
      });
  return d.standings(at);
};

const evolve = (state: SubnetState, event: SubnetEvent): SubnetState => {
  if (event.type === 'subnet.created')
    return {
      exists: true,
      subnetId: event.data.subnetId,
      ownerId: event.data.ownerId,
      asset: event.data.asset,
      ownerStake: minor(event.data.stake),
      version: 1,
      parameters: event.data.parameters,
      members: new Map(),
      delegations: new Map(),
      slashes: new Map(),
      proposals: new Map(),
    };
  if (!state.exists) return state;
  switch (event.type) {
    case 'subnet.request-rejected':
      return state;
    case 'subnet.parameters-updated': {
      const { proposalId } = event.data;
      const next = { ...state, version: event.data.version, parameters: event.data.parameters };
      return proposalId === undefined
        ? next
        : updateProposal(next, proposalId, (p) => ({
            ...p,
            status: 'applied',
            appliedVersion: event.data.version,
          }));
    }
    case 'subnet.provider-joined': {
      const before = state.members.get(event.data.providerId);
      const members = new Map(state.members);
      members.set(event.data.providerId, {
        providerId: event.data.providerId,
        stake: minor(event.data.stake),
        held: 0n,
        status: 'active',
        unbondsAt: null,
        joins: (before?.joins ?? 0) + 1,
        slashed: before?.slashed ?? 0n,
        jailedUntil: before?.jailedUntil ?? null,
        standing: before?.standing ?? null,
      });
      return { ...state, members };
    }
    case 'subnet.provider-left':
      return updateMember(state, event.data.providerId, (m) => ({
        ...m,
        status: 'unbonding',
        unbondsAt: event.data.unbondsAt,
      }));
    case 'subnet.stake-released':
      return updateMember(state, event.data.providerId, (m) => ({ ...m, status: 'released', stake: 0n }));
    case 'subnet.member-standing-changed':
      return updateMember(state, event.data.providerId, (m) => ({ ...m, standing: event.data.standing }));
    case 'subnet.slash-proposed': {
      const d = event.data;
      const slashes = new Map(state.slashes);
      slashes.set(d.slashId, {
        slashId: d.slashId,
        providerId: d.providerId,
        evidence: d.evidence,
        amount: minor(d.amount),
        shares: d.shares,
        destination: d.destination,
        beneficiaryId: d.beneficiaryId,
        status: 'held',
        appealUntil: d.appealUntil,
        jailedUntil: d.jailedUntil,
        proposedAt: d.proposedAt,
        appealProposalId: null,
      });
      const next = updateMember({ ...state, slashes }, d.providerId, (m) => ({
        ...m,
        jailedUntil: latest(m.jailedUntil, d.jailedUntil),
      }));
      return holdShares(next, d.providerId, d.shares, 1n, 0n);
    }
    case 'subnet.provider-slashed': {
      const d = event.data;
      if (d.slashId === undefined || d.shares === undefined)
        // Taken before slashes were held: the provider alone lost `amount`.
        return updateMember(state, d.providerId, (m) => ({
          ...m,
          stake: m.stake - minor(d.amount),
          slashed: m.slashed + minor(d.amount),
        }));
      return holdShares(updateSlash(state, d.slashId, { status: 'taken' }), d.providerId, d.shares, -1n, 1n);
    }
    case 'subnet.slash-overturned': {
      const d = event.data;
      const slash = state.slashes.get(d.slashId);
      if (!slash) return state;
      const next = updateProposal(
        updateSlash(state, d.slashId, { status: 'overturned' }),
        d.proposalId,
        (p) => ({
          ...p,
          status: 'applied',
        }),
      );
      // The jail lifted: what other slashes not overturned still impose.
      const jail = [...next.slashes.values()]
        .filter((x) => x.providerId === d.providerId && x.status !== 'overturned')
        .reduce<string | null>((j, x) => latest(j, x.jailedUntil), null);
      return holdShares(
        updateMember(next, d.providerId, (m) => ({ ...m, jailedUntil: jail })),
        d.providerId,
        slash.shares,
        -1n,
        0n,
      );
    }
    case 'subnet.proposal-opened': {
      const d = event.data;
      const proposals = new Map(state.proposals);
      const governance = state.parameters.governance;
      proposals.set(d.proposalId, {
        proposalId: d.proposalId,
        proposerId: d.proposerId,
        title: d.title,
        change: d.change,
        electorate: minor(d.electorate),
        decidedBy: d.decidedBy,
        rules: d.decidedBy === 'stake-vote' && governance.mode === 'stake-vote' ? governance : null,
        votingEndsAt: d.votingEndsAt,
        openedAt: d.openedAt,
        votes: new Map(),
        status: 'open',
        decision: null,
        appliedVersion: null,
      });
      const next = { ...state, proposals };
      return d.change.kind === 'overturn-slash'
        ? updateSlash(next, d.change.slashId, { appealProposalId: d.proposalId })
        : next;
    }
    case 'subnet.vote-cast': {
      const d = event.data;
      return updateProposal(state, d.proposalId, (p) => ({
        ...p,
        votes: new Map(p.votes).set(d.voterId, { choice: d.choice, weight: minor(d.weight) }),
      }));
    }
    case 'subnet.proposal-decided':
      return updateProposal(state, event.data.proposalId, (p) => ({
        ...p,
        status: event.data.outcome,
        decision: event.data,
      }));
    case 'subnet.delegated': {
      const d = event.data;
      const key = delegationKey(d.delegatorId, d.providerId);
      const before = state.delegations.get(key);
      const delegations = new Map(state.delegations);
      delegations.set(key, {
        delegatorId: d.delegatorId,
        providerId: d.providerId,
        amount: minor(d.total),
        held: before?.status === 'active' ? before.held : 0n,
        status: 'active',
        unbondsAt: null,
        slashed: before?.slashed ?? 0n,
        locks: (before?.locks ?? 0) + 1,
        releases: before?.releases ?? 0,
      });
      return { ...state, delegations };
    }
    case 'subnet.undelegated':
      return updateDelegation(state, delegationKey(event.data.delegatorId, event.data.providerId), (x) => ({
        ...x,
        status: 'unbonding',
        unbondsAt: event.data.unbondsAt,
      }));
    case 'subnet.delegation-released':
      return updateDelegation(state, delegationKey(event.data.delegatorId, event.data.providerId), (x) => ({
        ...x,
        status: 'released',
        amount: 0n,
        releases: x.releases + 1,
      }));
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};

const latest = (a: string | null, b: string): string => (a !== null && Date.parse(a) > Date.parse(b) ? a : b);

/**
 * Moves a slash's shares on the stakes: `held` by `heldSign` × share, and, when `takenSign` is 1,
 * out of the posted stake into `slashed`.
 */
const holdShares = (
  state: Existing,
  providerId: string,
  shares: PayloadOf<typeof SubnetSlashProposed>['shares'],
  heldSign: bigint,
  takenSign: bigint,
): Existing => {
  let next = state;
  for (const share of shares) {
    const amount = minor(share.amount);
    const move = <T extends { held: bigint; slashed: bigint }>(x: T, stake: bigint): [bigint, T] => [
      stake - takenSign * amount,
      { ...x, held: x.held + heldSign * amount, slashed: x.slashed + takenSign * amount },
    ];
    next =
      share.role === 'provider'
        ? updateMember(next, providerId, (m) => {
            const [stake, moved] = move(m, m.stake);
            return { ...moved, stake };
          })
        : updateDelegation(next, delegationKey(share.stakerId, providerId), (x) => {
            const [amount2, moved] = move(x, x.amount);
            return { ...moved, amount: amount2 };
          });
  }
  return next;
};

const updateMember = (state: Existing, providerId: string, change: (m: Member) => Member): Existing => {
  const member = state.members.get(providerId);
  if (!member) return state;
  return { ...state, members: new Map(state.members).set(providerId, change(member)) };
};

const updateDelegation = (state: Existing, key: string, change: (d: Delegation) => Delegation): Existing => {
  const delegation = state.delegations.get(key);
  if (!delegation) return state;
  return { ...state, delegations: new Map(state.delegations).set(key, change(delegation)) };
};

const updateSlash = (state: Existing, slashId: string, change: Partial<Slash>): Existing => {
  const slash = state.slashes.get(slashId);
  if (!slash) return state;
  return { ...state, slashes: new Map(state.slashes).set(slashId, { ...slash, ...change }) };
};

const updateProposal = (state: Existing, proposalId: string, change: (p: Proposal) => Proposal): Existing => {
  const proposal = state.proposals.get(proposalId);
  if (!proposal) return state;
  return { ...state, proposals: new Map(state.proposals).set(proposalId, change(proposal)) };
};

export const subnetDecider: Decider<SubnetCommand, SubnetEvent, SubnetState> = {
  initialState: { exists: false },
  decide,
  evolve,
};
