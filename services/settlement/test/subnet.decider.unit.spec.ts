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

const create = (
  ownerId = 'o1',
  stake = 5_000n,
  available = 10_000n,
  parameters = PARAMETERS,
  testAssets: readonly string[] = [],
): SubnetCommand => ({
  type: 'CreateSubnet',
  request: { subnetId: 's1', ownerId, asset: 'NTX', stake: stake.toString(), parameters, requestedAt: AT },
  available,
  minCreationStake: 1_000n,
  testAssets,
  at: AT,
});
const SIMULATED_ALLOWED = {
  ...PARAMETERS,
  trust: { ...PARAMETERS.trust, simulatedGpus: 'allowed' as const },
};
const HOST_PROCESSES_ALLOWED = {
  ...PARAMETERS,
  trust: { ...PARAMETERS.trust, minimumIsolation: 'host-process' as const },
};
const messageOf = (events: SubnetEvent[]) =>
  events.map((e) => (e.type === 'subnet.request-rejected' ? e.data.message : e.type));
const join = (providerId: string, stake = 1_000n, available = 5_000n): SubnetCommand => ({
  type: 'JoinSubnet',
  subnetId: 's1',
  providerId,
  stake,
  available,
  at: AT,
});
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
const reasonOf = (events: SubnetEvent[]) =>
  events.map((e) => (e.type === 'subnet.request-rejected' ? e.data.reason : e.type));

describe('subnet: creation locks the owner stake', () => {
  it('creates version 1 and moves the stake from the wallet to the stake account', () => {
    const { events } = run(create());
    expect(events.map((e) => e.type)).toEqual(['subnet.created']);
    expect(subnetTransfers(subnetDecider.initialState, events[0]!)).toMatchObject([
      {
        debitAccountId: 'NTX:wallet:o1',
        creditAccountId: 'NTX:stake:o1@s1',
        amount: 5_000n,
        code: 'stake-lock',
      },
    ]);
  });

  const refusals: { name: string; command: SubnetCommand; before?: SubnetCommand[]; reason: string }[] = [
    {
      name: 'a stake below the platform minimum',
      command: create('o1', 999n),
      reason: 'stake-below-minimum',
    },
    { name: 'a stake above the wallet', command: create('o1', 5_000n, 4_999n), reason: 'insufficient-funds' },
    {
      name: 'a name another owner holds',
      before: [create()],
      command: create('o2'),
      reason: 'already-exists',
    },
    {
      name: 'a GPU class without a price',
      command: create('o1', 5_000n, 10_000n, { ...PARAMETERS, gpuClasses: ['H100', 'A100'] }),
      reason: 'invalid-parameters',
    },
  ];
  for (const r of refusals)
    it(`refuses ${r.name}`, () => {
      expect(reasonOf(run(...(r.before ?? []), r.command).events).at(-1)).toBe(r.reason);
    });

  it('takes a redelivered creation for what it is', () => {
    given(subnetDecider, run(create()).events).when(create()).then([]);
  });
});

describe('subnet: parameters are versioned', () => {
  const update = (
    ownerId: string,
    parameters = { ...PARAMETERS, subnetFeeBps: 2000 },
    testAssets: string[] = [],
  ): SubnetCommand => ({
    type: 'UpdateParameters',
    subnetId: 's1',
    ownerId,
    parameters,
    testAssets,
    at: AT,
  });
  it('only the owner updates; each update is a new version', () => {
    const { events, state } = run(create(), update('mallory'), update('o1'), update('o1'));
    expect(reasonOf(events)).toEqual([
      'subnet.created',
      'not-owner',
      'subnet.parameters-updated',
      'subnet.parameters-updated',
    ]);
    expect(state.exists && state.version).toBe(3);
  });

  it('an update allowing simulated GPUs is refused unless the asset is a test asset, naming the field and the asset', () => {
    const refused = run(create(), update('o1', SIMULATED_ALLOWED));
    expect(reasonOf(refused.events)).toEqual(['subnet.created', 'invalid-parameters']);
    expect(messageOf(refused.events)[1]).toBe(
      "parameters.trust.simulatedGpus: 'allowed' only in a subnet whose asset settles no real value; NTX does (test assets: none)",
    );
    expect(refused.state.exists && refused.state.version).toBe(1);
    const accepted = run(create(), update('o1', SIMULATED_ALLOWED, ['NTX']));
    expect(reasonOf(accepted.events)).toEqual(['subnet.created', 'subnet.parameters-updated']);
  });

  it('an update allowing host-process edges is refused unless the asset is a test asset, naming the field and the asset', () => {
    const refused = run(create(), update('o1', HOST_PROCESSES_ALLOWED));
    expect(reasonOf(refused.events)).toEqual(['subnet.created', 'invalid-parameters']);
    expect(messageOf(refused.events)[1]).toBe(
      "parameters.trust.minimumIsolation: 'host-process' only in a subnet whose asset settles no real value; NTX does (test assets: none)",
    );
    expect(refused.state.exists && refused.state.version).toBe(1);
    const accepted = run(create(), update('o1', HOST_PROCESSES_ALLOWED, ['NTX']));
    expect(reasonOf(accepted.events)).toEqual(['subnet.created', 'subnet.parameters-updated']);
  });
});

describe('subnet: simulated GPUs only where the asset settles no real value', () => {
  it('refuses creating a subnet that allows them on an asset of real value, naming the field and the asset', () => {
    const { events, state } = run(create('o1', 5_000n, 10_000n, SIMULATED_ALLOWED, ['DEMO']));
    expect(reasonOf(events)).toEqual(['invalid-parameters']);
    expect(messageOf(events)[0]).toBe(
      "parameters.trust.simulatedGpus: 'allowed' only in a subnet whose asset settles no real value; NTX does (test assets: DEMO)",
    );
    expect(state.exists).toBe(false);
  });

  it('creates one on a test asset; refusing them needs no test asset', () => {
    expect(reasonOf(run(create('o1', 5_000n, 10_000n, SIMULATED_ALLOWED, ['NTX'])).events)).toEqual([
      'subnet.created',
    ]);
    expect(reasonOf(run(create('o1', 5_000n, 10_000n, PARAMETERS, [])).events)).toEqual(['subnet.created']);
  });
});

describe('subnet: host-process edges only where the asset settles no real value', () => {
  it('refuses creating a subnet that allows them on an asset of real value, naming the field and the asset; creates one on a test asset', () => {
    const { events, state } = run(create('o1', 5_000n, 10_000n, HOST_PROCESSES_ALLOWED, ['DEMO']));
    expect(reasonOf(events)).toEqual(['invalid-parameters']);
    expect(messageOf(events)[0]).toBe(
      "parameters.trust.minimumIsolation: 'host-process' only in a subnet whose asset settles no real value; NTX does (test assets: DEMO)",
    );
    expect(state.exists).toBe(false);
    expect(reasonOf(run(create('o1', 5_000n, 10_000n, HOST_PROCESSES_ALLOWED, ['NTX'])).events)).toEqual([
      'subnet.created',
    ]);
  });

  it.each(['container', 'container-userns', 'gvisor'] as const)(
    'a minimum of %s needs no test asset',
    (minimumIsolation) => {
      const parameters = { ...PARAMETERS, trust: { ...PARAMETERS.trust, minimumIsolation } };
      expect(reasonOf(run(create('o1', 5_000n, 10_000n, parameters, [])).events)).toEqual(['subnet.created']);
    },
  );
});

describe('subnet: providers join, leave and are slashed', () => {
  it('admits by the membership rules and the minimum stake', () => {
    const { events } = run(
      create(),
      join('p3'),
      join('p1', 99n),
      join('p1', 1_000n, 999n),
      join('p1'),
      join('p1'),
    );
    expect(reasonOf(events)).toEqual([
      'subnet.created',
      'not-allowed',
      'stake-below-minimum',
      'insufficient-funds',
      'subnet.provider-joined',
      'subnet.member-standing-changed',
    ]);
  });

  it('unbonds on leave, still slashable, and releases what is left when the period is over', () => {
    const leave: SubnetCommand = { type: 'LeaveSubnet', subnetId: 's1', providerId: 'p1', at: AT };
    const early: SubnetCommand = { type: 'Tick', at: '2030-01-01T00:59:59.000Z' };
    const due: SubnetCommand = { type: 'Tick', at: '2030-01-01T01:00:00.000Z' };
    const { events, state } = run(
      create(),
      join('p1'),
      leave,
      slash('p1', 'j1', 2500),
      slash('p1', 'j1', 2500),
      early,
      due,
    );
    expect(events.map((e) => e.type)).toEqual([
      'subnet.created',
      'subnet.provider-joined',
      'subnet.member-standing-changed',
      'subnet.provider-left',
      'subnet.member-standing-changed',
      'subnet.slash-proposed',
      'subnet.provider-slashed',
      'subnet.stake-released',
      'subnet.member-standing-changed',
    ]);
    expect(events[3]!.data).toMatchObject({ unbondsAt: '2030-01-01T01:00:00.000Z' });
    expect(events[7]!.data).toMatchObject({ amount: '750' });
    expect(state.exists && state.members.get('p1')).toMatchObject({
      status: 'released',
      stake: 0n,
      slashed: 250n,
    });
  });

  it('never slashes more than the stake, and nothing once it is gone', () => {
    const { events } = run(create(), join('p1'), slash('p1', 'j1', 10_000), slash('p1', 'j2', 10_000));
    expect(events.filter((e) => e.type === 'subnet.provider-slashed').map((e) => e.data)).toEqual([
      expect.objectContaining({ amount: '1000', stakeBefore: '1000' }),
    ]);
  });
});
