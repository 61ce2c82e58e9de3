import {
  type Decider,
  type DomainEvent,
  type FaultKindSchema,
  type PayloadOf,
  type SubnetCreated,
  type SubnetCreateRequested,
  type SubnetParametersUpdated,
  type SubnetProviderJoined,
  type SubnetProviderLeft,
  type SubnetProviderSlashed,
  type SubnetRequestRejected,
  type SubnetStakeReleased,
} from '@gpunet/contracts';
import type { z } from 'zod';
import { bpsOf, minOf, minor, toWire } from '../money';
import type { SubnetParameters } from '../job/job-settlement.decider';
import { listPrice } from '../job/pricing';

/*
 * A subnet's economy (stream `subnet-<id>`): created by locking its owner's stake; parameters
 * versioned (a job keeps the version it was funded under); providers join by locking stake and leave
 * through an unbonding period during which they can still be slashed; a slash never exceeds the stake.
 */

export type FaultKind = z.output<typeof FaultKindSchema>;

export type SubnetEvent =
  | DomainEvent<'subnet.created', PayloadOf<typeof SubnetCreated>>
  | DomainEvent<'subnet.request-rejected', PayloadOf<typeof SubnetRequestRejected>>
  | DomainEvent<'subnet.parameters-updated', PayloadOf<typeof SubnetParametersUpdated>>
  | DomainEvent<'subnet.provider-joined', PayloadOf<typeof SubnetProviderJoined>>
  | DomainEvent<'subnet.provider-left', PayloadOf<typeof SubnetProviderLeft>>
  | DomainEvent<'subnet.stake-released', PayloadOf<typeof SubnetStakeReleased>>
  | DomainEvent<'subnet.provider-slashed', PayloadOf<typeof SubnetProviderSlashed>>;

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
  | { readonly type: 'ReleaseUnbonded'; readonly at: string }
  | {
      readonly type: 'SlashProvider';
      readonly providerId: string;
      readonly jobId: string;
      readonly kind: FaultKind;
      /** Share of the stake, from the slashing table the job was funded under. */
      readonly bps: number;
      readonly at: string;
    };

export interface Member {
  readonly providerId: string;
  readonly stake: bigint;
  readonly status: 'active' | 'unbonding' | 'released';
  readonly unbondsAt: string | null;
  /** Times joined: numbers the stake transfers, so leaving and rejoining never reuses an id. */
  readonly joins: number;
  readonly slashed: bigint;
}

export type SubnetState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly subnetId: string;
      readonly ownerId: string;
      readonly asset: string;
      readonly ownerStake: bigint;
      readonly version: number;
      readonly parameters: SubnetParameters;
      readonly members: ReadonlyMap<string, Member>;
      /** `<job>/<provider>/<kind>` slashes applied: one fault is slashed once. */
      readonly slashes: ReadonlySet<string>;
    };

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

/**
 * Parameters a subnet cannot run on: a GPU class without a price, or simulated GPUs allowed while
 * the subnet's asset settles real value (only an asset in `testAssets` holds none). Simulated GPUs
 * are declared, never challenged: paying real money for them would pay for work nobody can check.
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
    return `parameters.trust.simulatedGpus: 'allowed' only in a subnet whose asset settles no real value; ${asset} does (test assets: ${testAssets.length === 0 ? 'none' : testAssets.join(', ')})`;
  return null;
};

const plusSeconds = (at: string, seconds: number): string =>
  new Date(Date.parse(at) + seconds * 1000).toISOString();

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
      if (!state.exists)
        return rejected(
          command.subnetId,
          'update-parameters',
          command.ownerId,
          'unknown-subnet',
          'no such subnet',
          command.at,
        );
      if (state.ownerId !== command.ownerId)
        return rejected(
          command.subnetId,
          'update-parameters',
          command.ownerId,
          'not-owner',
          'only the owner updates a subnet',
          command.at,
        );
      const problem = parametersProblem(command.parameters, state.asset, command.testAssets);
      if (problem)
        return rejected(
          command.subnetId,
          'update-parameters',
          command.ownerId,
          'invalid-parameters',
          problem,
          command.at,
        );
      return [
        {
          type: 'subnet.parameters-updated',
          data: {
            subnetId: state.subnetId,
            version: state.version + 1,
            parameters: command.parameters,
            updatedAt: command.at,
          },
        },
      ];
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
      return [
        {
          type: 'subnet.provider-joined',
          data: { subnetId, providerId, stake: toWire(command.stake), joinedAt: command.at },
        },
      ];
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
      return [
        {
          type: 'subnet.provider-left',
          data: {
            subnetId,
            providerId,
            leftAt: command.at,
            unbondsAt: plusSeconds(command.at, state.parameters.unbondingSeconds),
          },
        },
      ];
    }
    case 'ReleaseUnbonded': {
      if (!state.exists) return [];
      const now = Date.parse(command.at);
      return [...state.members.values()]
        .filter((m) => m.status === 'unbonding' && m.unbondsAt !== null && Date.parse(m.unbondsAt) <= now)
        .sort((a, b) => (a.providerId < b.providerId ? -1 : 1))
        .map((m) => ({
          type: 'subnet.stake-released',
          data: {
            subnetId: state.subnetId,
            providerId: m.providerId,
            amount: toWire(m.stake),
            releasedAt: command.at,
          },
        }));
    }
    case 'SlashProvider': {
      if (!state.exists) return [];
      const member = state.members.get(command.providerId);
      const key = `${command.jobId}/${command.providerId}/${command.kind}`;
      if (!member || member.status === 'released' || state.slashes.has(key)) return [];
      // Never above the stake, whatever the table says.
      const amount = minOf(bpsOf(member.stake, command.bps), member.stake);
      if (amount <= 0n) return [];
      return [
        {
          type: 'subnet.provider-slashed',
          data: {
            subnetId: state.subnetId,
            providerId: command.providerId,
            jobId: command.jobId,
            kind: command.kind,
            amount: toWire(amount),
            stakeBefore: toWire(member.stake),
            slashedAt: command.at,
          },
        },
      ];
    }
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
};

const evolve = (state: SubnetState, event: SubnetEvent): SubnetState => {
  switch (event.type) {
    case 'subnet.created':
      return {
        exists: true,
        subnetId: event.data.subnetId,
        ownerId: event.data.ownerId,
        asset: event.data.asset,
        ownerStake: minor(event.data.stake),
        version: 1,
        parameters: event.data.parameters,
        members: new Map(),
        slashes: new Set(),
      };
    case 'subnet.request-rejected':
      return state;
    case 'subnet.parameters-updated':
      return state.exists
        ? { ...state, version: event.data.version, parameters: event.data.parameters }
        : state;
    case 'subnet.provider-joined': {
      if (!state.exists) return state;
      const before = state.members.get(event.data.providerId);
      const members = new Map(state.members);
      members.set(event.data.providerId, {
        providerId: event.data.providerId,
        stake: minor(event.data.stake),
        status: 'active',
        unbondsAt: null,
        joins: (before?.joins ?? 0) + 1,
        slashed: before?.slashed ?? 0n,
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
    case 'subnet.provider-slashed': {
      const next = updateMember(state, event.data.providerId, (m) => ({
        ...m,
        stake: m.stake - minor(event.data.amount),
        slashed: m.slashed + minor(event.data.amount),
      }));
      if (!next.exists) return next;
      const key = `${event.data.jobId}/${event.data.providerId}/${event.data.kind}`;
      return { ...next, slashes: new Set([...next.slashes, key]) };
    }
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};

const updateMember = (state: SubnetState, providerId: string, change: (m: Member) => Member): SubnetState => {
  if (!state.exists) return state;
  const member = state.members.get(providerId);
  if (!member) return state;
  const members = new Map(state.members);
  members.set(providerId, change(member));
  return { ...state, members };
};

export const subnetDecider: Decider<SubnetCommand, SubnetEvent, SubnetState> = {
  initialState: { exists: false },
  decide,
  evolve,
};
