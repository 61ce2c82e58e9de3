import {
  foldEvents,
  JobCompleted,
  JobSubmitted,
  originOf,
  type PayloadOf,
  streamIdOf,
  SubnetCreateRequested,
  SubnetJoinRequested,
  UsageReported,
} from '@gpunet/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobSettlementEvent, jobSettlementDecider } from '../src/domain/job/job-settlement.decider';
import { billedGpuSeconds, figuresFor } from '../src/domain/job/pricing';
import { hashOf, replayLedger } from './support/invariants';
import { message } from './support/message';
import { type SettlementUnderTest, startSettlement } from './support/service';

/*
 * Fifty usage reports for one job, all at once, each also delivered a second time (a redelivery
 * with a new event id), against real Postgres: every report is applied on the state the previous
 * one left (no lost update), nothing is accrued or paid twice, and the end settles exactly once.
 */

const PROVIDERS = ['p1', 'p2', 'p3', 'p4', 'p5'];
const GPUS_EACH = 2;
const PRICE = 3_600_000n; // per GPU-hour: 1 000 per GPU-second
const PARAMETERS = {
  gpuClasses: ['H100'],
  pricing: { mode: 'fixed' as const, pricePerGpuHour: { H100: PRICE.toString() } },
  billingIncrementSeconds: 10,
  minimumChargeSeconds: 60,
  subnetFeeBps: 500,
  providerMinStake: '0',
  slashing: {},
  unbondingSeconds: 0,
  membership: { mode: 'open' as const },
};
const reading = (seq: number, provider: number) => seq * 37 * GPUS_EACH + provider * 3;

describe('50 concurrent usage reports for one job (Postgres)', () => {
  let s: SettlementUnderTest;
  const jobId = 'job-concurrent';
  const jobStream = streamIdOf('job', jobId);

  beforeAll(async () => {
    s = await startSettlement('concurrency');
    await s.commands.recordDeposit(
      {
        depositId: 'd1',
        asset: 'NTX',
        ownerId: 'tenant',
        amount: '1000000000000',
        chain: 'simulated',
        chainTxId: 'tx1',
        confirmations: 15,
        confirmedAt: '2030-01-01T00:00:00Z',
      },
      originOf('tx1'),
    );
    await s.commands.recordDeposit(
      {
        depositId: 'd2',
        asset: 'NTX',
        ownerId: 'owner',
        amount: '1000000',
        chain: 'simulated',
        chainTxId: 'tx2',
        confirmations: 15,
        confirmedAt: '2030-01-01T00:00:00Z',
      },
      originOf('tx2'),
    );
    await s.deliver(
      message(SubnetCreateRequested, {
        subnetId: 'sub',
        ownerId: 'owner',
        asset: 'NTX',
        stake: '5000',
        parameters: PARAMETERS,
        requestedAt: '2030-01-01T00:00:00Z',
      }),
    );
    // Only members are billed; the minimum stake is 0.
    for (const providerId of PROVIDERS)
      await s.deliver(
        message(SubnetJoinRequested, {
          subnetId: 'sub',
          providerId,
          stake: '0',
          requestedAt: '2030-01-01T00:00:00Z',
        }),
      );
    await s.deliver(
      message(JobSubmitted, {
        jobId,
        tenantId: 'tenant',
        subnetId: 'sub',
        asset: 'NTX',
        gpus: PROVIDERS.length * GPUS_EACH,
        gpuClasses: ['H100'],
        maxPricePerGpuHour: PRICE.toString(),
        maxDurationSeconds: 7_200,
        submittedAt: '2030-01-01T00:00:00Z',
      }),
    );
  }, 60_000);
  afterAll(() => s?.close());

  const jobState = async () =>
    foldEvents(
      jobSettlementDecider,
      (await s.eventing.store.readStream(jobStream)).map(
        (e) => ({ type: e.type, data: e.data }) as JobSettlementEvent,
      ),
    );

  it('accrues every report once, in order, with no lost update', async () => {
    const reports = Array.from({ length: 50 }, (_, i) =>
      message(UsageReported, {
        jobId,
        seq: i + 1,
        providers: PROVIDERS.map((providerId, p) => ({
          providerId,
          gpuClass: 'H100',
          gpus: GPUS_EACH,
          gpuSeconds: reading(i + 1, p),
        })),
        reportedAt: '2030-01-01T00:10:00Z',
      }),
    );
    const redeliveries = reports.map((r) => ({ ...r, eventId: `${r.eventId.slice(0, -4)}ffff` }));
    const results = await Promise.allSettled([...reports, ...redeliveries].map((r) => s.deliver(r)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);

    const state = await jobState();
    if (state.status !== 'funded') throw new Error(`job is ${state.status}`);
    const terms = state.terms;
    const transfers = await s.ledger.transfers(s.eventing.db, { jobId });
    for (const [p, providerId] of PROVIDERS.entries()) {
      const expectedBilled = billedGpuSeconds(BigInt(reading(50, p)), GPUS_EACH, terms, 7_200);
      const expected = figuresFor(expectedBilled, PRICE, terms);
      const position = state.providers.get(providerId)!;
      expect(position.billed).toBe(expectedBilled);
      // The pending legs add up to exactly the cumulative figure: nothing twice, nothing lost.
      const accrued = transfers
        .filter((t) => t.kind === 'pending' && t.creditAccountId === `NTX:payable:${providerId}`)
        .reduce((sum, t) => sum + t.amount, 0n);
      expect(accrued).toBe(expected.charge);
    }
    const escrow = (await s.ledger.lockAccounts(s.eventing.db, [`NTX:escrow:${jobId}`])).get(
      `NTX:escrow:${jobId}`,
    )!;
    expect(escrow.debitsPending).toBe(state.accrued);
    // Each metered report raised the accrued total; none was applied on a stale state.
    const metered = (await s.eventing.store.readStream(jobStream)).filter((e) => e.type === 'usage.metered');
    const accruedSeries = metered.map((e) =>
      BigInt((e.data as PayloadOf<typeof UsageReported> & { accrued: string }).accrued),
    );
    expect(accruedSeries).toEqual([...accruedSeries].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(metered.map((e) => (e.data as { seq: number }).seq)).size).toBe(metered.length);
  }, 60_000);

  it('settles once under concurrent ends and late reports, pays exactly the final figures, empties the escrow', async () => {
    const final = PROVIDERS.map((providerId, p) => ({
      providerId,
      gpuClass: 'H100',
      gpus: GPUS_EACH,
      gpuSeconds: reading(60, p),
    }));
    const ends = Array.from({ length: 10 }, () =>
      message(JobCompleted, { jobId, usage: final, faults: [], completedAt: '2030-01-01T01:00:00Z' }),
    );
    const late = Array.from({ length: 10 }, (_, i) =>
      message(UsageReported, {
        jobId,
        seq: 51 + i,
        providers: PROVIDERS.map((providerId, p) => ({
          providerId,
          gpuClass: 'H100',
          gpus: GPUS_EACH,
          gpuSeconds: reading(51 + i, p),
        })),
        reportedAt: '2030-01-01T00:59:00Z',
      }),
    );
    const results = await Promise.allSettled([...ends, ...late].map((e) => s.deliver(e)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);

    const events = await s.eventing.store.readStream(jobStream);
    expect(events.filter((e) => e.type === 'job.settled')).toHaveLength(1);
    const state = await jobState();
    if (state.status !== 'settled') throw new Error(`job is ${state.status}`);
    const sql = s.eventing.db;
    for (const [p, providerId] of PROVIDERS.entries()) {
      const expected = figuresFor(
        billedGpuSeconds(BigInt(reading(60, p)), GPUS_EACH, state.terms, 7_200),
        PRICE,
        state.terms,
      );
      const payable = (await s.ledger.lockAccounts(sql, [`NTX:payable:${providerId}`])).get(
        `NTX:payable:${providerId}`,
      )!;
      expect(payable.creditsPosted).toBe(expected.charge);
      expect(payable.creditsPending).toBe(0n);
    }
    const escrow = (await s.ledger.lockAccounts(sql, [`NTX:escrow:${jobId}`])).get(`NTX:escrow:${jobId}`)!;
    expect(escrow.creditsPosted - escrow.debitsPosted).toBe(0n);
    expect(escrow.debitsPending).toBe(0n);
    const totals = await s.ledger.totals(sql, 'NTX');
    expect([totals.posted, totals.pending]).toEqual([0n, 0n]);
    // The ledger is exactly what the event store says it should be.
    expect(hashOf(replayLedger(await s.log()))).toBe(await s.ledger.hash(sql));
  }, 60_000);
});
