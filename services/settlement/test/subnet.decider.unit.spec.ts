import {
  JobSubmitted,
  SubnetCreateRequested,
  SubnetParametersUpdateRequested,
  UsageReported,
  JobCompleted,
} from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import type { SubnetParameters } from '../src/domain/job/job-settlement.decider';
import {
  type SubnetCommand,
  subnetDecider,
  type SubnetEvent,
  type SubnetState,
} from '../src/domain/subnet/subnet.decider';
import { subnetTransfers } from '../src/domain/subnet/subnet.effects';
import { deliver } from './support/harness';
import { MemoryStore } from './support/memory-store';
import { message } from './support/message';

const AT = '2030-01-01T00:00:00.000Z';
const PARAMETERS: SubnetParameters = {
  gpuClasses: ['H100'],
  pricing: { mode: 'fixed', pricePerGpuHour: { H100: '3600' } },
  billingIncrementSeconds: 1,
  minimumChargeSeconds: 0,
  subnetFeeBps: 1000,
  providerMinStake: '100',
  slashing: { 'host-lost': 2500, 'rank-crashed': 10_000 },
  unbondingSeconds: 3600,
  membership: { mode: 'allowlist', providers: ['p1', 'p2'] },
};
const create = (
  ownerId = 'o1',
  stake = 5_000n,
  available = 10_000n,
  parameters = PARAMETERS,
): SubnetCommand => ({
  type: 'CreateSubnet',
  request: { subnetId: 's1', ownerId, asset: 'NTX', stake: stake.toString(), parameters, requestedAt: AT },
  available,
  minCreationStake: 1_000n,
  at: AT,
});
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
  const update = (ownerId: string): SubnetCommand => ({
    type: 'UpdateParameters',
    subnetId: 's1',
    ownerId,
    parameters: { ...PARAMETERS, subnetFeeBps: 2000 },
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

  it('applies to jobs funded after the update, never to running ones', async () => {
    const store = new MemoryStore();
    await store.transaction(async (uow) => {
      await uow.applyTransfers([
        {
          id: 'd1',
          debitAccountId: 'NTX:chain:custody',
          creditAccountId: 'NTX:wallet:o1',
          amount: 10_000n,
          kind: 'posted',
          pendingId: null,
          code: 'deposit',
          jobId: null,
          at: AT,
        },
        {
          id: 'd2',
          debitAccountId: 'NTX:chain:custody',
          creditAccountId: 'NTX:wallet:t1',
          amount: 10n ** 12n,
          kind: 'posted',
          pendingId: null,
          code: 'deposit',
          jobId: null,
          at: AT,
        },
      ]);
    });
    const job = (jobId: string) =>
      message(JobSubmitted, {
        jobId,
        tenantId: 't1',
        subnetId: 's1',
        asset: 'NTX',
        gpus: 1,
        gpuClasses: [],
        maxPricePerGpuHour: '7200',
        maxDurationSeconds: 3600,
        submittedAt: AT,
      });
    const used = (jobId: string) => [
      message(UsageReported, {
        jobId,
        seq: 1,
        providers: [{ providerId: 'p1', gpuClass: 'H100', gpus: 1, gpuSeconds: 3600 }],
        reportedAt: AT,
      }),
      message(JobCompleted, {
        jobId,
        usage: [{ providerId: 'p1', gpuClass: 'H100', gpus: 1, gpuSeconds: 3600 }],
        completedAt: AT,
      }),
    ];
    await deliver(
      [
        {
          kind: 'message',
          envelope: message(SubnetCreateRequested, {
            subnetId: 's1',
            ownerId: 'o1',
            asset: 'NTX',
            stake: '5000',
            parameters: PARAMETERS,
            requestedAt: AT,
          }),
        },
        { kind: 'message', envelope: job('before') },
        {
          kind: 'message',
          envelope: message(SubnetParametersUpdateRequested, {
            subnetId: 's1',
            ownerId: 'o1',
            parameters: { ...PARAMETERS, pricing: { mode: 'fixed', pricePerGpuHour: { H100: '7200' } } },
            requestedAt: AT,
          }),
        },
        { kind: 'message', envelope: job('after') },
        ...[...used('before'), ...used('after')].map((envelope) => ({ kind: 'message' as const, envelope })),
      ],
      { store },
    );
    const settled = store.log.flatMap(({ event }) =>
      event.type === 'job.settled' ? [event.data as { jobId: string; paidToProviders: string }] : [],
    );
    expect(settled.map((s) => [s.jobId, s.paidToProviders])).toEqual([
      ['before', '3600'],
      ['after', '7200'],
    ]);
  });
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
    ]);
  });

  it('unbonds on leave, still slashable, and releases what is left when the period is over', () => {
    const leave: SubnetCommand = { type: 'LeaveSubnet', subnetId: 's1', providerId: 'p1', at: AT };
    const slash: SubnetCommand = {
      type: 'SlashProvider',
      providerId: 'p1',
      jobId: 'j1',
      kind: 'host-lost',
      bps: 2500,
      at: AT,
    };
    const early: SubnetCommand = { type: 'ReleaseUnbonded', at: '2030-01-01T00:59:59.000Z' };
    const due: SubnetCommand = { type: 'ReleaseUnbonded', at: '2030-01-01T01:00:00.000Z' };
    const { events, state } = run(create(), join('p1'), leave, slash, slash, early, due);
    expect(events.map((e) => e.type)).toEqual([
      'subnet.created',
      'subnet.provider-joined',
      'subnet.provider-left',
      'subnet.provider-slashed',
      'subnet.stake-released',
    ]);
    expect(events[2]!.data).toMatchObject({ unbondsAt: '2030-01-01T01:00:00.000Z' });
    expect(events[4]!.data).toMatchObject({ amount: '750' });
    expect(state.exists && state.members.get('p1')).toMatchObject({
      status: 'released',
      stake: 0n,
      slashed: 250n,
    });
  });

  it('never slashes more than the stake, and nothing once it is gone', () => {
    const slash = (jobId: string): SubnetCommand => ({
      type: 'SlashProvider',
      providerId: 'p1',
      jobId,
      kind: 'rank-crashed',
      bps: 10_000,
      at: AT,
    });
    const { events } = run(create(), join('p1'), slash('j1'), slash('j2'));
    expect(events.filter((e) => e.type === 'subnet.provider-slashed').map((e) => e.data)).toEqual([
      expect.objectContaining({ amount: '1000', stakeBefore: '1000' }),
    ]);
  });
});
