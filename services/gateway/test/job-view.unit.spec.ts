import { describe, expect, it } from 'vitest';
import { applyJobEvent, type JobEvent, type JobView, submittedView } from '../src/domain/job-view';

const EDGE = 'U'.padEnd(56, 'A');
const t = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
const initial = submittedView({
  jobId: 'j1',
  tenantId: 't1',
  name: 'job',
  subnetId: 'ai',
  asset: 'NTX',
  gpus: 2,
  gpuClasses: [],
  maxPricePerGpuHour: '1',
  maxDurationSeconds: 60,
  submittedAt: t(0),
});

const ev = (type: string, data: Record<string, unknown>, at = t(1)): JobEvent => ({
  type,
  data: { jobId: 'j1', ...data },
  occurredAt: at,
});
const given = (...events: JobEvent[]): JobView => events.reduce(applyJobEvent, initial);

const placed = ev('job.placed', {
  allocations: [
    {
      name: 'main',
      gpuCount: 2,
      nodes: [{ providerId: EDGE, hostId: 'h', gpuUuids: ['g1', 'g2'], reservationId: 'r', ranks: 2 }],
      predictedStepUs: 1,
      pricePerHourMinor: '10',
    },
  ],
  at: t(2),
});
const launching = (attempt: number) =>
  ev('job.launching', {
    attempt,
    ranks: [
      {
        rank: 0,
        allocation: 'main',
        providerId: EDGE,
        hostId: 'h',
        gpuUuids: ['g1'],
        gpuClass: 'H100',
        address: '10.0.0.1',
      },
    ],
  });
const running = (attempt: number) => ev('job.running', { attempt });
const usage = (seq: number, gpuSeconds: number) =>
  ev('usage.reported', {
    seq,
    providers: [{ providerId: EDGE, gpuClass: 'H100', gpus: 2, gpuSeconds }],
    reportedAt: t(seq),
  });

describe('job view', () => {
  it.each([
    { name: 'funded', events: [ev('job.funded', { escrow: '100' })], status: 'funded' },
    { name: 'placed after funded', events: [ev('job.funded', { escrow: '1' }), placed], status: 'placed' },
    {
      name: 'placed before funded (other stream late)',
      events: [placed, ev('job.funded', { escrow: '1' })],
      status: 'placed',
    },
    {
      name: 'running, then a stale placement',
      events: [placed, launching(1), running(1), placed],
      status: 'running',
    },
    {
      name: 'completed is terminal',
      events: [
        running(1),
        ev('job.completed', { usage: [] }),
        ev('job.failed', { reason: { code: 'X', message: 'm' }, usage: [] }),
      ],
      status: 'completed',
    },
    {
      name: 'restart: the newer attempt wins, the older is ignored',
      events: [
        launching(1),
        running(1),
        ev('job.restarting', { attempt: 2, reason: { code: 'RANK_FAILED', message: 'm' } }),
        running(1),
      ],
      status: 'restarting',
    },
    {
      name: 'restart then running again',
      events: [
        running(1),
        ev('job.restarting', { attempt: 2, reason: { code: 'R', message: 'm' } }),
        launching(2),
        running(2),
      ],
      status: 'running',
    },
    {
      name: 'rejected escrow',
      events: [ev('escrow.rejected', { reason: 'insufficient-funds', message: 'poor' })],
      status: 'rejected',
    },
    {
      name: 'rank.exited changes nothing',
      events: [ev('rank.exited', { attempt: 1, rank: 0 })],
      status: 'submitted',
    },
  ])('$name → $status', ({ events, status }) => {
    expect(given(...events).status).toBe(status);
  });

  it('keeps the highest usage reading; final readings replace it', () => {
    expect(given(usage(2, 200), usage(1, 100)).usage).toMatchObject({
      seq: 2,
      gpuSeconds: 200,
      final: false,
    });
    const final = given(
      usage(2, 200),
      ev('job.completed', { usage: [{ providerId: EDGE, gpuClass: 'H100', gpus: 2, gpuSeconds: 300 }] }),
      usage(3, 250),
    );
    expect(final.usage).toMatchObject({ final: true, gpuSeconds: 300 });
  });

  it('shows usage disputes (once per rank) and the faults the job ended with', () => {
    const dispute = ev('usage.disputed', {
      providerId: EDGE,
      attempt: 1,
      rank: 0,
      edgeSeconds: 200,
      observedSeconds: 100,
      paidSeconds: 100,
      at: t(5),
    });
    const fault = {
      providerId: EDGE,
      kind: 'host-lost',
      billableGpuSeconds: 200,
      verified: true,
      detail: 'rank 0 (attempt 1) last heard of at 2030-01-01T00:00:03.000Z',
    };
    const view = given(
      dispute,
      dispute,
      ev('job.failed', { reason: { code: 'RANK_LOST', message: 'm' }, usage: [], faults: [fault] }),
    );
    expect(view.disputes).toEqual([
      {
        providerId: EDGE,
        attempt: 1,
        rank: 0,
        edgeSeconds: 200,
        observedSeconds: 100,
        paidSeconds: 100,
        at: t(5),
      },
    ]);
    expect(view.faults).toEqual([fault]);
    expect(initial).toMatchObject({ disputes: [], faults: [] });
  });

  it('tracks cost: escrow, accruals, then the settlement', () => {
    const view = given(
      ev('job.funded', { escrow: '1000' }),
      ev('usage.metered', { accrued: '300', remaining: '700' }),
      ev('job.settled', {
        asset: 'NTX',
        funded: '1000',
        paidToProviders: '280',
        subnetFees: '10',
        platformFees: '10',
        refunded: '700',
        settledAt: t(9),
      }),
      ev('usage.metered', { accrued: '999', remaining: '1' }),
    );
    expect(view.cost).toEqual({
      asset: 'NTX',
      escrow: '1000',
      accrued: '300',
      remaining: '0',
      settled: {
        paidToProviders: '280',
        subnetFees: '10',
        platformFees: '10',
        refunded: '700',
        settledAt: t(9),
      },
    });
  });

  it('records placement, rank addresses and the cancel request', () => {
    const view = given(placed, launching(1), ev('job.cancel-requested', { requestedAt: t(5) }));
    expect(view.placement?.allocations[0]?.nodes[0]?.gpuUuids).toEqual(['g1', 'g2']);
    expect(view.ranks?.[0]?.address).toBe('10.0.0.1');
    expect(view.cancelRequestedAt).toBe(t(5));
    expect(view.attempt).toBe(1);
  });

  it('returns the same object when nothing changes', () => {
    const done = given(ev('job.cancelled', { usage: [] }));
    expect(applyJobEvent(done, running(1))).toBe(done);
  });
});
