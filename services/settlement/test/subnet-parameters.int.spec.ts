import {
  JobCompleted,
  JobSubmitted,
  originOf,
  SubnetCreateRequested,
  SubnetJoinRequested,
  SubnetParametersUpdateRequested,
  UsageReported,
} from '@gpunet/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedChainAdapter } from '../src/infra/chain/simulated-chain.adapter';
import { SettlementReader } from '../src/infra/settlement-reader';
import { message } from './support/message';
import { type SettlementUnderTest, startSettlement } from './support/service';
import { AT, PARAMETERS } from './support/subnet.fixture';

/*
 * A subnet's parameters are versioned: a job is funded, metered and paid under the version it was
 * funded under, whatever the owner changes while it runs. Messages handed to settlement's
 * controllers one after the other, on real Postgres.
 */

describe('subnet parameters are versioned', () => {
  let s: SettlementUnderTest;
  beforeAll(async () => {
    s = await startSettlement('settlement_subnet_versions');
  }, 60_000);
  afterAll(() => s?.close());

  it('apply to jobs funded after the update, never to running ones', async () => {
    for (const [ownerId, amount] of [
      ['o1', 10_000n],
      ['t1', 10n ** 12n],
      ['p1', 1_000n],
    ] as const)
      await s.commands.recordDeposit(
        {
          depositId: `d-${ownerId}`,
          asset: 'NTX',
          ownerId,
          amount: amount.toString(),
          chain: 'simulated',
          chainTxId: `tx-${ownerId}`,
          confirmations: 3,
          confirmedAt: AT,
        },
        originOf(`tx-${ownerId}`),
      );
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
    for (const envelope of [
      message(SubnetCreateRequested, {
        subnetId: 's1',
        ownerId: 'o1',
        asset: 'NTX',
        stake: '5000',
        parameters: PARAMETERS,
        requestedAt: AT,
      }),
      message(SubnetJoinRequested, { subnetId: 's1', providerId: 'p1', stake: '100', requestedAt: AT }),
      job('before'),
      message(SubnetParametersUpdateRequested, {
        subnetId: 's1',
        ownerId: 'o1',
        parameters: { ...PARAMETERS, pricing: { mode: 'fixed', pricePerGpuHour: { H100: '7200' } } },
        requestedAt: AT,
      }),
      job('after'),
      ...used('before'),
      ...used('after'),
    ])
      await s.deliver(envelope);
    const settled = (await s.log()).flatMap(({ event }) =>
      event.type === 'job.settled' ? [event.data as { jobId: string; paidToProviders: string }] : [],
    );
    expect(settled.map((e) => [e.jobId, e.paidToProviders])).toEqual([
      ['before', '3600'],
      ['after', '7200'],
    ]);
  });
});

/*
 * Simulated GPUs are allowed only in a subnet whose asset settles no real value: settlement's
 * SETTLEMENT_TEST_ASSETS names those assets (here: the settlement under test has DEMO only).
 */
describe('simulated GPUs only in a subnet of a test asset', () => {
  let s: SettlementUnderTest;
  beforeAll(async () => {
    s = await startSettlement('settlement_subnet_trust', {
      chain: new SimulatedChainAdapter({ assets: ['NTX', 'DEMO'] }),
      economy: { testAssets: ['DEMO'] },
    });
  }, 60_000);
  afterAll(() => s?.close());

  const allowing = { ...PARAMETERS, trust: { ...PARAMETERS.trust, simulatedGpus: 'allowed' as const } };
  const deposit = (asset: string) =>
    s.commands.recordDeposit(
      {
        depositId: `d-o1-${asset}`,
        asset,
        ownerId: 'o1',
        amount: '10000',
        chain: 'simulated',
        chainTxId: `tx-o1-${asset}`,
        confirmations: 3,
        confirmedAt: AT,
      },
      originOf(`tx-o1-${asset}`),
    );
  const create = (subnetId: string, asset: string, parameters: typeof PARAMETERS = allowing) =>
    s.deliver(
      message(SubnetCreateRequested, {
        subnetId,
        ownerId: 'o1',
        asset,
        stake: '2000',
        parameters,
        requestedAt: AT,
      }),
    );
  const outcomes = async (subnetId: string) =>
    (await s.log()).flatMap(({ streamId, event }) =>
      streamId === `subnet-${subnetId}`
        ? [
            event.type === 'subnet.request-rejected'
              ? `${(event.data as { reason: string }).reason}: ${(event.data as { message: string }).message}`
              : event.type,
          ]
        : [],
    );

  it('refuses a subnet allowing them on an asset of real value (creation and update), naming the field and the asset; accepts one on a test asset', async () => {
    await deposit('NTX');
    await deposit('DEMO');
    await create('real', 'NTX');
    expect(await outcomes('real')).toEqual([
      "invalid-parameters: parameters.trust.simulatedGpus: 'allowed' only in a subnet whose asset settles no real value; NTX does (test assets: DEMO)",
    ]);
    // The subnet's economics (GET /v1/subnets/{id} through the gateway) say why to its requester.
    const economics = await s.service.app.get(SettlementReader).subnetEconomics('real');
    expect(economics).toMatchObject({
      exists: false,
      lastRejection: {
        request: 'create',
        requesterId: 'o1',
        reason: 'invalid-parameters',
        message: expect.stringContaining("parameters.trust.simulatedGpus: 'allowed'"),
      },
    });
    await create('demo', 'DEMO');
    expect(await outcomes('demo')).toEqual(['subnet.created']);
    expect(await s.service.app.get(SettlementReader).subnetEconomics('demo')).toMatchObject({
      exists: true,
      asset: 'DEMO',
      parameters: { trust: { simulatedGpus: 'allowed' } },
      lastRejection: null,
    });
    // A real-value subnet that refuses them is created; allowing them later is refused too.
    await create('real2', 'NTX', PARAMETERS);
    await s.deliver(
      message(SubnetParametersUpdateRequested, {
        subnetId: 'real2',
        ownerId: 'o1',
        parameters: allowing,
        requestedAt: AT,
      }),
    );
    const real2 = await outcomes('real2');
    expect(real2[0]).toBe('subnet.created');
    expect(real2[1]).toContain("invalid-parameters: parameters.trust.simulatedGpus: 'allowed'");
    expect(real2).toHaveLength(2);
  });
});

/*
 * Host-process edges run a stranger's code unsandboxed (ADR 0072): a subnet may accept them
 * (`trust.minimumIsolation: host-process`) only where its asset settles no real value, as for
 * simulated GPUs (here: the settlement under test has DEMO only as a test asset).
 */
describe('host-process edges only in a subnet of a test asset', () => {
  let s: SettlementUnderTest;
  beforeAll(async () => {
    s = await startSettlement('settlement_subnet_isolation', {
      chain: new SimulatedChainAdapter({ assets: ['NTX', 'DEMO'] }),
      economy: { testAssets: ['DEMO'] },
    });
  }, 60_000);
  afterAll(() => s?.close());

  const hostProcesses = {
    ...PARAMETERS,
    trust: { ...PARAMETERS.trust, minimumIsolation: 'host-process' as const },
  };
  const deposit = (asset: string) =>
    s.commands.recordDeposit(
      {
        depositId: `d-o1-${asset}`,
        asset,
        ownerId: 'o1',
        amount: '10000',
        chain: 'simulated',
        chainTxId: `tx-o1-${asset}`,
        confirmations: 3,
        confirmedAt: AT,
      },
      originOf(`tx-o1-${asset}`),
    );
  const create = (subnetId: string, asset: string, parameters: typeof PARAMETERS) =>
    s.deliver(
      message(SubnetCreateRequested, {
        subnetId,
        ownerId: 'o1',
        asset,
        stake: '2000',
        parameters,
        requestedAt: AT,
      }),
    );
  const outcomes = async (subnetId: string) =>
    (await s.log()).flatMap(({ streamId, event }) =>
      streamId === `subnet-${subnetId}`
        ? [
            event.type === 'subnet.request-rejected'
              ? `${(event.data as { reason: string }).reason}: ${(event.data as { message: string }).message}`
              : event.type,
          ]
        : [],
    );

  it('refuses a subnet accepting them on an asset of real value (creation and update), naming the field and the asset; accepts one on a test asset', async () => {
    await deposit('NTX');
    await deposit('DEMO');
    await create('real', 'NTX', hostProcesses);
    expect(await outcomes('real')).toEqual([
      "invalid-parameters: parameters.trust.minimumIsolation: 'host-process' only in a subnet whose asset settles no real value; NTX does (test assets: DEMO)",
    ]);
    expect(await s.service.app.get(SettlementReader).subnetEconomics('real')).toMatchObject({
      exists: false,
      lastRejection: {
        request: 'create',
        reason: 'invalid-parameters',
        message: expect.stringContaining("parameters.trust.minimumIsolation: 'host-process'"),
      },
    });
    await create('demo', 'DEMO', hostProcesses);
    expect(await outcomes('demo')).toEqual(['subnet.created']);
    expect(await s.service.app.get(SettlementReader).subnetEconomics('demo')).toMatchObject({
      exists: true,
      parameters: { trust: { minimumIsolation: 'host-process' } },
    });
    // A real-value subnet with the default (containers) is created; lowering it later is refused.
    await create('real2', 'NTX', PARAMETERS);
    expect(await s.service.app.get(SettlementReader).subnetEconomics('real2')).toMatchObject({
      exists: true,
      parameters: { trust: { minimumIsolation: 'container' } },
    });
    await s.deliver(
      message(SubnetParametersUpdateRequested, {
        subnetId: 'real2',
        ownerId: 'o1',
        parameters: hostProcesses,
        requestedAt: AT,
      }),
    );
    const real2 = await outcomes('real2');
    expect(real2).toEqual([
      'subnet.created',
      "invalid-parameters: parameters.trust.minimumIsolation: 'host-process' only in a subnet whose asset settles no real value; NTX does (test assets: DEMO)",
    ]);
  });
});
