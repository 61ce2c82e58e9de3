import {
  JobCompleted,
  JobSubmitted,
  originOf,
  SubnetCreateRequested,
  SubnetParametersUpdateRequested,
  UsageReported,
} from '@gpunet/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
