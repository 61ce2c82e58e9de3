import type { SubnetParametersInput } from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  type SubnetCommand,
  subnetDecider,
  type SubnetEvent,
  type SubnetState,
} from '../src/domain/subnet/subnet.decider';
import { subnetTransfers } from '../src/domain/subnet/subnet.effects';
import { slash } from './support/subnet-commands';
import { AT, PARAMETERS } from './support/subnet.fixture';

/*
 * ADR 0071 in the subnet decider: stake votes, the owner's appeals, held slashes split pro rata
 * over delegations, standing events, delegation unbonding.
 */

const T = (seconds: number): string => new Date(Date.parse(AT) + seconds * 1000).toISOString();
const STAKE_VOTE = {
  ...PARAMETERS,
  membership: { mode: 'open' as const },
  governance: {
    mode: 'stake-vote' as const,
    quorumBps: 5_000,
    thresholdBps: 6_000,
    votingSeconds: 100,
    delaySeconds: 50,
  },
};
type Params = typeof PARAMETERS;

const create = (parameters: Params = STAKE_VOTE, stake = 1_000n): SubnetCommand => ({
  type: 'CreateSubnet',
  request: {
    subnetId: 's1',
    ownerId: 'o1',
    asset: 'NTX',
    stake: stake.toString(),
    parameters,
    requestedAt: AT,
  },
  available: 10_000n,
  minCreationStake: 1_000n,
  testAssets: [],
  at: AT,
});
const join = (providerId: string, stake = 1_000n): SubnetCommand => ({
  type: 'JoinSubnet',
  subnetId: 's1',
  providerId,
  stake,
  available: 10_000n,
  at: AT,
});
const delegate = (delegatorId: string, providerId: string, amount: bigint, at = AT): SubnetCommand => ({
  type: 'Delegate',
  request: { subnetId: 's1', delegatorId, providerId, amount: amount.toString(), requestedAt: at },
  available: 10_000n,
  at,
});
const undelegate = (delegatorId: string, providerId: string, at = AT): SubnetCommand => ({
  type: 'Undelegate',
  request: { subnetId: 's1', delegatorId, providerId, requestedAt: at },
  at,
});
const propose = (
  proposalId: string,
  proposerId: string,
  change: SubnetCommandChange,
  at = AT,
): SubnetCommand => ({
  type: 'Propose',
  request: { subnetId: 's1', proposalId, proposerId, title: proposalId, change, requestedAt: at },
  testAssets: [],
  at,
});
type SubnetCommandChange = Extract<SubnetCommand, { type: 'Propose' }>['request']['change'];
const newParameters = (change: Partial<SubnetParametersInput> = {}): SubnetCommandChange => ({
  kind: 'parameters',
  parameters: { ...STAKE_VOTE, subnetFeeBps: 2_000, ...change } as Params,
});
const vote = (
  proposalId: string,
  voterId: string,
  choice: 'yes' | 'no' | 'abstain',
  at = AT,
): SubnetCommand => ({
  type: 'Vote',
  request: { subnetId: 's1', proposalId, voterId, choice, requestedAt: at },
  at,
});
const tick = (seconds: number): SubnetCommand => ({ type: 'Tick', at: T(seconds) });

const run = (...commands: SubnetCommand[]): { events: SubnetEvent[]; state: SubnetState } => {
  let state = subnetDecider.initialState;
  const events: SubnetEvent[] = [];
  for (const c of commands)
    for (const e of subnetDecider.decide(c, state)) {
      events.push(e);
      state = subnetDecider.evolve(state, e);
    }
  return { events, state };
};
const last = (events: SubnetEvent[]): SubnetEvent => events.at(-1)!;
const reasonsOf = (events: SubnetEvent[]) =>
  events.flatMap((e) => (e.type === 'subnet.request-rejected' ? [e.data.reason] : []));
type DataOf<K extends SubnetEvent['type']> = Extract<SubnetEvent, { type: K }>['data'];
const ofType = <K extends SubnetEvent['type']>(events: SubnetEvent[], type: K): DataOf<K>[] =>
  events.filter((e) => e.type === type).map((e) => e.data as DataOf<K>);
const exists = (state: SubnetState) => {
  if (!state.exists) throw new Error('no subnet');
  return state;
};

/** Owner 1 000, p1 1 000 + d1 500 delegated, p2 1 000: electorate 3 500. */
const SUBNET = [create(), join('p1'), join('p2'), delegate('d1', 'p1', 500n)];

describe('governance: stake votes', () => {
  it('weighs each vote with the voter’s stake now (owner, provider own, delegated); a later vote replaces', () => {
    const { events, state } = run(
      ...SUBNET,
      propose('g1', 'd1', newParameters()),
      vote('g1', 'o1', 'yes'),
      vote('g1', 'p1', 'no'),
      vote('g1', 'd1', 'yes'),
      vote('g1', 'p1', 'yes'),
    );
    expect(ofType(events, 'subnet.proposal-opened')[0]).toMatchObject({
      electorate: '3500',
      decidedBy: 'stake-vote',
      votingEndsAt: T(100),
    });
    expect(ofType(events, 'subnet.vote-cast').map((v) => [v.voterId, v.choice, v.weight])).toEqual([
      ['o1', 'yes', '1000'],
      ['p1', 'no', '1000'],
      ['d1', 'yes', '500'],
      ['p1', 'yes', '1000'],
    ]);
    expect([...exists(state).proposals.get('g1')!.votes.values()].map((v) => v.choice)).toEqual([
      'yes',
      'yes',
      'yes',
    ]);
  });

  it('passes at the threshold of yes + no and takes effect delaySeconds after the vote closed, as a new version', () => {
    // yes 2 000 (o1, p2), no 1 000 (p1): 66.7 % ≥ 60 %; votes 3 000 ≥ 50 % of 3 500.
    const opened = [
      ...SUBNET,
      propose('g1', 'p2', newParameters()),
      vote('g1', 'o1', 'yes'),
      vote('g1', 'p2', 'yes'),
      vote('g1', 'p1', 'no'),
    ];
    const closed = run(...opened, tick(100));
    expect(ofType(closed.events, 'subnet.proposal-decided')).toEqual([
      expect.objectContaining({
        outcome: 'passed',
        reason: 'threshold-met',
        yes: '2000',
        no: '1000',
        takesEffectAt: T(150),
      }),
    ]);
    expect(ofType(closed.events, 'subnet.parameters-updated')).toEqual([]);
    const before = run(...opened, tick(100), tick(149));
    expect(ofType(before.events, 'subnet.parameters-updated')).toEqual([]);
    const applied = run(...opened, tick(100), tick(150));
    expect(ofType(applied.events, 'subnet.parameters-updated')).toEqual([
      expect.objectContaining({ version: 2, proposalId: 'g1', updatedAt: T(150) }),
    ]);
    expect(exists(applied.state).parameters.subnetFeeBps).toBe(2_000);
    expect(exists(applied.state).proposals.get('g1')).toMatchObject({ status: 'applied', appliedVersion: 2 });
  });

  it('fails below the threshold: yes 1 500 of yes + no 3 000 is 50 % < 60 %', () => {
    const { events, state } = run(
      ...SUBNET,
      propose('g1', 'p1', newParameters()),
      vote('g1', 'p1', 'yes'),
      vote('g1', 'd1', 'yes'),
      vote('g1', 'o1', 'no'),
      vote('g1', 'p2', 'no'),
      tick(100),
      tick(1_000),
    );
    expect(ofType(events, 'subnet.proposal-decided')).toEqual([
      expect.objectContaining({ outcome: 'rejected', reason: 'threshold-not-met', takesEffectAt: null }),
    ]);
    expect(exists(state).version).toBe(1);
  });

  it('fails under quorum: 1 500 cast (abstain counts) of 3 500 is under 50 %, however lopsided', () => {
    const { events } = run(
      ...SUBNET,
      propose('g1', 'p1', newParameters()),
      vote('g1', 'p1', 'yes'),
      vote('g1', 'd1', 'abstain'),
      tick(100),
    );
    expect(ofType(events, 'subnet.proposal-decided')).toEqual([
      expect.objectContaining({
        outcome: 'rejected',
        reason: 'quorum-not-met',
        yes: '1000',
        abstain: '500',
        electorate: '3500',
      }),
    ]);
  });

  it('refuses the owner’s direct update, a proposal by a non-voter, invalid parameters, a clash; takes a redelivery as one', () => {
    const update: SubnetCommand = {
      type: 'UpdateParameters',
      subnetId: 's1',
      ownerId: 'o1',
      parameters: STAKE_VOTE,
      testAssets: [],
      at: AT,
    };
    const { events } = run(
      ...SUBNET,
      update,
      propose('g1', 'stranger', newParameters()),
      propose('g1', 'p1', newParameters({ gpuClasses: ['H100', 'A100'] })),
      propose('g1', 'p1', newParameters()),
      propose('g1', 'p1', newParameters()),
      propose('g1', 'p2', newParameters()),
    );
    expect(reasonsOf(events)).toEqual([
      'governance-mode',
      'not-a-voter',
      'invalid-parameters',
      'proposal-exists',
    ]);
    expect(ofType(events, 'subnet.proposal-opened')).toHaveLength(1);
  });

  it('refuses votes on an unknown proposal, after the close, and from a non-voter; the same vote again changes nothing', () => {
    const { events } = run(
      ...SUBNET,
      propose('g1', 'p1', newParameters()),
      vote('nope', 'p1', 'yes'),
      vote('g1', 'stranger', 'yes'),
      vote('g1', 'p1', 'yes'),
      vote('g1', 'p1', 'yes'),
      vote('g1', 'p2', 'yes', T(100)),
    );
    expect(reasonsOf(events)).toEqual(['unknown-proposal', 'not-a-voter', 'voting-closed']);
    expect(ofType(events, 'subnet.vote-cast')).toHaveLength(1);
  });

  it('lowers standing of members below a raised minimum when the change applies', () => {
    const { events } = run(
      ...SUBNET,
      join('p3', 400n),
      propose('g1', 'o1', newParameters({ providerMinStake: '500' })),
      vote('g1', 'o1', 'yes'),
      vote('g1', 'p1', 'yes'),
      tick(150),
    );
    expect(ofType(events, 'subnet.member-standing-changed').filter((e) => e.changedAt === T(150))).toEqual([
      expect.objectContaining({
        providerId: 'p3',
        standing: 'below-minimum-stake',
        stake: '400',
        minStake: '500',
      }),
    ]);
  });
});

describe('governance: owner mode', () => {
  const OWNER = { ...PARAMETERS, membership: { mode: 'open' as const } };
  const held = slash('p1', 'j1', 1_000, { policy: { appealSeconds: 600, jailSeconds: 300 } });
  const slashId = (held as Extract<SubnetCommand, { type: 'ProposeSlash' }>).slashId;
  const appeal = (proposerId = 'p1', at = AT) =>
    propose('a1', proposerId, { kind: 'overturn-slash', slashId }, at);

  it('refuses parameter proposals; the owner updates at once', () => {
    const update: SubnetCommand = {
      type: 'UpdateParameters',
      subnetId: 's1',
      ownerId: 'o1',
      parameters: OWNER,
      testAssets: [],
      at: AT,
    };
    const { events } = run(create(OWNER), join('p1'), propose('g1', 'p1', newParameters()), update);
    expect(reasonsOf(events)).toEqual(['governance-mode']);
    expect(ofType(events, 'subnet.parameters-updated')).toHaveLength(1);
  });

  it('opens an appeal decided by the owner, open until the slash’s appeal window closes', () => {
    const { events } = run(create(OWNER), join('p1'), held, appeal());
    expect(ofType(events, 'subnet.proposal-opened')).toEqual([
      expect.objectContaining({ decidedBy: 'owner', votingEndsAt: T(600), electorate: '1000' }),
    ]);
  });

  it('only the slashed provider appeals, while the window is open, once; an unknown slash is refused', () => {
    const { events } = run(
      create(OWNER),
      join('p1'),
      join('p2'),
      held,
      propose('x', 'p1', { kind: 'overturn-slash', slashId: `slash-${'0'.repeat(32)}` }),
      appeal('p2'),
      propose('late', 'p1', { kind: 'overturn-slash', slashId }, T(600)),
      appeal(),
      propose('again', 'p1', { kind: 'overturn-slash', slashId }),
    );
    expect(reasonsOf(events)).toEqual(['unknown-slash', 'not-allowed', 'appeal-closed', 'proposal-exists']);
  });

  it('an appeal the owner votes yes overturns the slash: holds voided, jail lifted', () => {
    const { events, state } = run(
      create(OWNER),
      join('p1'),
      held,
      appeal(),
      vote('a1', 'p1', 'yes'),
      vote('a1', 'o1', 'yes'),
      tick(600),
    );
    expect(reasonsOf(events)).toEqual(['not-a-voter']);
    expect(ofType(events, 'subnet.proposal-decided')).toEqual([
      expect.objectContaining({ outcome: 'passed', reason: 'threshold-met' }),
    ]);
    expect(ofType(events, 'subnet.slash-overturned')).toEqual([
      expect.objectContaining({ slashId, proposalId: 'a1' }),
    ]);
    expect(ofType(events, 'subnet.provider-slashed')).toEqual([]);
    expect(exists(state).members.get('p1')).toMatchObject({
      stake: 1_000n,
      held: 0n,
      jailedUntil: null,
      standing: 'good',
    });
    const before = run(create(OWNER), join('p1'), held, appeal(), vote('a1', 'o1', 'yes'), tick(600));
    const overturned = before.events.find((e) => e.type === 'subnet.slash-overturned')!;
    expect(
      subnetTransfers(
        run(create(OWNER), join('p1'), held, appeal(), vote('a1', 'o1', 'yes')).state,
        overturned,
      ),
    ).toEqual([
      expect.objectContaining({ kind: 'void-pending', pendingId: `slash:${slashId}:provider`, amount: 100n }),
    ]);
  });

  it('an appeal the owner votes no, or not at all, fails and the slash is taken when the window closes', () => {
    const no = run(create(OWNER), join('p1'), held, appeal(), vote('a1', 'o1', 'no'), tick(600));
    expect(ofType(no.events, 'subnet.proposal-decided')).toEqual([
      expect.objectContaining({ outcome: 'rejected', reason: 'threshold-not-met' }),
    ]);
    expect(ofType(no.events, 'subnet.provider-slashed')).toEqual([
      expect.objectContaining({ slashId, amount: '100' }),
    ]);
    const silent = run(create(OWNER), join('p1'), held, appeal(), tick(600));
    expect(ofType(silent.events, 'subnet.proposal-decided')).toEqual([
      expect.objectContaining({ reason: 'quorum-not-met' }),
    ]);
    expect(exists(silent.state).members.get('p1')).toMatchObject({ stake: 900n, held: 0n, slashed: 100n });
  });

  it('a stake-vote appeal holds the slash past its window until the vote closes', () => {
    const longVote = { ...STAKE_VOTE, governance: { ...STAKE_VOTE.governance, votingSeconds: 1_000 } };
    const opened = [create(longVote), join('p1'), held, appeal()];
    expect(ofType(run(...opened, tick(600)).events, 'subnet.provider-slashed')).toEqual([]);
    const closed = run(...opened, vote('a1', 'o1', 'no'), tick(1_000));
    expect(ofType(closed.events, 'subnet.provider-slashed')).toHaveLength(1);
  });
});

describe('slashing: held, split pro rata, capped, sent where the policy says', () => {
  // p1 own 1 000, d1 333, d2 667: 2 000 in all.
  const BASE = [create(), join('p1'), delegate('d1', 'p1', 333n), delegate('d2', 'p1', 667n)];

  it('splits bps of own + delegated stake pro rata, delegators rounded down, the remainder on the provider', () => {
    // 10 % of 2 000 = 200 → d1 ⌊200·333/2000⌋ = 33, d2 ⌊200·667/2000⌋ = 66, p1 101.
    const { events } = run(...BASE, slash('p1', 'j1', 1_000, { policy: { appealSeconds: 60 } }));
    const [proposed] = ofType(events, 'subnet.slash-proposed');
    expect(proposed).toMatchObject({ amount: '200', bps: 1_000, appealUntil: T(60) });
    expect(proposed!.shares).toEqual([
      { stakerId: 'p1', role: 'provider', amount: '101' },
      { stakerId: 'd1', role: 'delegator', amount: '33' },
      { stakerId: 'd2', role: 'delegator', amount: '66' },
    ]);
    expect(proposed!.slashId).toMatch(/^slash-[0-9a-f]{32}$/);
  });

  it('holds each share as a pending transfer from its stake account and posts them when the window closes', () => {
    const proposedRun = run(...BASE);
    const { events } = run(...BASE, slash('p1', 'j1', 1_000, { policy: { appealSeconds: 60 } }));
    const proposed = events.find((e) => e.type === 'subnet.slash-proposed')!;
    const holds = subnetTransfers(proposedRun.state, proposed);
    expect(holds.map((t) => [t.debitAccountId, t.kind, t.amount])).toEqual([
      ['NTX:stake:p1@s1', 'pending', 101n],
      ['NTX:stake:d1@s1@p1', 'pending', 33n],
      ['NTX:stake:d2@s1@p1', 'pending', 66n],
    ]);
    expect(new Set(holds.map((t) => t.creditAccountId)).size).toBe(1);
    expect(holds[0]!.creditAccountId).toMatch(/^NTX:treasury:s1#[0-9a-f]{2}$/);
    const early = run(...BASE, slash('p1', 'j1', 1_000, { policy: { appealSeconds: 60 } }), tick(59));
    expect(ofType(early.events, 'subnet.provider-slashed')).toEqual([]);
    const held = run(...BASE, slash('p1', 'j1', 1_000, { policy: { appealSeconds: 60 } }));
    const after = run(...BASE, slash('p1', 'j1', 1_000, { policy: { appealSeconds: 60 } }), tick(60));
    const taken = after.events.find((e) => e.type === 'subnet.provider-slashed')!;
    expect(taken.data).toMatchObject({
      amount: '200',
      stakeBefore: '1000',
      destination: 'treasury',
      beneficiaryId: null,
    });
    expect(subnetTransfers(held.state, taken).map((t) => [t.kind, t.pendingId, t.amount])).toEqual([
      ['post-pending', `slash:${proposed.data.slashId}:provider`, 101n],
      ['post-pending', `slash:${proposed.data.slashId}:d-d1`, 33n],
      ['post-pending', `slash:${proposed.data.slashId}:d-d2`, 66n],
    ]);
    const s = exists(after.state);
    expect([
      s.members.get('p1')!.stake,
      s.delegations.get('d1/p1')!.amount,
      s.delegations.get('d2/p1')!.amount,
    ]).toEqual([899n, 300n, 601n]);
  });

  it('never takes more than a stake holds: the provider’s share is capped at what is free of it', () => {
    // p1 owns 100 (90 held by a first slash), d1 delegates 900: 100 % of 1 000 free → d1 900, p1 10.
    const { events } = run(
      create(),
      join('p1', 100n),
      slash('p1', 'j1', 9_000, { policy: { appealSeconds: 60 } }),
      delegate('d1', 'p1', 900n),
      slash('p1', 'j2', 10_000, { policy: { appealSeconds: 60 } }),
      slash('p1', 'j3', 10_000, { policy: { appealSeconds: 60 } }),
    );
    const proposed = ofType(events, 'subnet.slash-proposed');
    expect(proposed.map((p) => p.amount)).toEqual(['90', '910']);
    expect(proposed[1]!.shares).toEqual([
      { stakerId: 'p1', role: 'provider', amount: '10' },
      { stakerId: 'd1', role: 'delegator', amount: '900' },
    ]);
  });

  it('sends it to the burn account, to the harmed tenant, or to the treasury when the evidence names no tenant', () => {
    const account = (policy: 'burn' | 'refund-tenant', beneficiaryId: string | null) => {
      const before = run(...BASE).state;
      const command = slash('p1', 'j1', 1_000, { policy: { destination: policy }, beneficiaryId });
      const proposed = subnetDecider.decide(command, before).find((e) => e.type === 'subnet.slash-proposed')!;
      return [proposed.data.beneficiaryId, subnetTransfers(before, proposed)[0]!.creditAccountId];
    };
    expect(account('burn', 'tenant-1')).toEqual([null, 'NTX:burn:s1']);
    expect(account('refund-tenant', 'tenant-1')).toEqual(['tenant-1', 'NTX:wallet:tenant-1']);
    expect(account('refund-tenant', null)[1]).toMatch(/^NTX:treasury:s1#/);
  });

  it('takes a slash at once when there is no appeal window (held and posted in one decision)', () => {
    const { events } = run(...BASE, slash('p1', 'j1', 1_000));
    expect(events.slice(-2).map((e) => e.type)).toEqual(['subnet.slash-proposed', 'subnet.provider-slashed']);
  });

  it('slashes the same evidence once, however often it arrives; nothing for a non-member, a released one or 0 bps', () => {
    const once = slash('p1', 'j1', 1_000, { policy: { appealSeconds: 60 } });
    given(subnetDecider, run(...BASE, once).events)
      .when(once)
      .then([]);
    const { events } = run(...BASE, slash('p9', 'j1', 1_000), slash('p1', 'j2', 0));
    expect(ofType(events, 'subnet.slash-proposed')).toEqual([]);
  });

  it('jails the provider for jailSeconds (standing jailed), and a tick after the jail sees it good again', () => {
    const { events } = run(
      create(),
      join('p1'),
      slash('p1', 'j1', 100, { policy: { jailSeconds: 300 } }),
      tick(299),
      tick(300),
    );
    expect(
      ofType(events, 'subnet.member-standing-changed').map((e) => [e.standing, e.jailedUntil, e.changedAt]),
    ).toEqual([
      ['good', null, AT],
      ['jailed', T(300), AT],
      ['good', null, T(300)],
    ]);
  });

  it('a slash that leaves the own stake below the minimum puts the provider below-minimum-stake', () => {
    const { events } = run(create(), join('p1', 110n), slash('p1', 'j1', 2_000));
    expect(last(events)).toMatchObject({
      type: 'subnet.member-standing-changed',
      data: { standing: 'below-minimum-stake', stake: '88', minStake: '100' },
    });
  });
});

describe('delegation', () => {
  it('delegates only to an active member provider, adds to the delegation, and locks from the wallet', () => {
    const { events, state } = run(
      create(),
      join('p1'),
      delegate('d1', 'p9', 10n),
      delegate('d1', 'p1', 0n),
      delegate('d1', 'p1', 100n),
      delegate('d1', 'p1', 50n),
    );
    expect(reasonsOf(events)).toEqual(['not-member', 'invalid-parameters']);
    expect(ofType(events, 'subnet.delegated').map((d) => d.total)).toEqual(['100', '150']);
    const before = run(create(), join('p1'), delegate('d1', 'p1', 100n)).state;
    expect(subnetTransfers(before, events.at(-1)!)).toEqual([
      expect.objectContaining({
        id: 'delegate:s1:d1:p1:2',
        debitAccountId: 'NTX:wallet:d1',
        creditAccountId: 'NTX:stake:d1@s1@p1',
        amount: 50n,
      }),
    ]);
    expect(exists(state).delegations.get('d1/p1')).toMatchObject({ amount: 150n, status: 'active' });
  });

  it('unbonds for unbondingSeconds, stays slashable meanwhile, and is released once no slash holds it', () => {
    const unbonding = [
      create(),
      join('p1'),
      delegate('d1', 'p1', 1_000n),
      undelegate('d1', 'p1'),
      undelegate('d1', 'p1'),
      undelegate('d2', 'p1'),
    ];
    const { events, state } = run(
      ...unbonding,
      slash('p1', 'j1', 1_000, { policy: { appealSeconds: 7_200 } }),
      tick(3_600),
      tick(7_200),
    );
    expect(reasonsOf(events)).toEqual(['not-delegated']);
    expect(ofType(events, 'subnet.undelegated')).toEqual([
      expect.objectContaining({ amount: '1000', unbondsAt: T(3_600) }),
    ]);
    expect(ofType(events, 'subnet.slash-proposed')[0]!.shares).toEqual([
      { stakerId: 'p1', role: 'provider', amount: '100' },
      { stakerId: 'd1', role: 'delegator', amount: '100' },
    ]);
    // Due at 3 600 but held until the slash is taken at 7 200; then what is left goes back.
    expect(ofType(events, 'subnet.delegation-released')).toEqual([
      expect.objectContaining({ amount: '900', releasedAt: T(7_200) }),
    ]);
    expect(exists(state).delegations.get('d1/p1')).toMatchObject({
      status: 'released',
      amount: 0n,
      slashed: 100n,
    });
  });

  it('a delegator votes with what it delegates, not once it unbonds', () => {
    const { events } = run(
      ...SUBNET,
      undelegate('d1', 'p1'),
      propose('g1', 'p1', newParameters()),
      vote('g1', 'd1', 'yes'),
    );
    expect(ofType(events, 'subnet.proposal-opened')[0]!.electorate).toBe('3000');
    expect(reasonsOf(events)).toEqual(['not-a-voter']);
  });
});
