import { JobPlaced, JobQueued, JobUnschedulable, type PlacedAllocation } from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  type AnnouncedJob,
  announcingJobPlacementDecider,
  isAnnouncement,
  type JobPlacementRecord,
} from '../src/domain/job-placement.announcements';
import type { JobPlacementCommand } from '../src/domain/job-placement.decider';

const decider = announcingJobPlacementDecider({ maxAttempts: 2 });
const job: AnnouncedJob = { jobId: 'job-1', tenantId: 't-1', asset: 'USDC' };
const T0 = '2030-01-01T00:00:00.000Z';
const T1 = '2030-01-01T00:00:01.000Z';
const HOLD = '2030-01-01T00:05:00.000Z';
const on = (command: JobPlacementCommand) => ({ job, command });

const allocations: PlacedAllocation[] = [
  {
    name: 'main',
    gpuCount: 1,
    nodes: [{ providerId: 'a', hostId: 'a-host', gpuUuids: ['a-gpu-0'], reservationId: 'r1-a', ranks: 1 }],
    predictedStepUs: 1000,
    pricePerHourMinor: '300',
  },
];
const queued: JobPlacementRecord = {
  type: 'Queued',
  data: { jobId: 'job-1', tenantId: 't-1', attempt: 1, reason: null, at: T0 },
};
const announcedQueued: JobPlacementRecord = {
  type: 'job.queued',
  data: { jobId: 'job-1', tenantId: 't-1', attempt: 1, reason: null, at: T0 },
};
const roundStarted: JobPlacementRecord = {
  type: 'RoundStarted',
  data: {
    roundId: 'r1',
    attempt: 1,
    allocations,
    deadline: T1,
    holdUntil: HOLD,
    at: T0,
    prices: { 'r1-a': '300' },
    auction: null,
  },
};
const startRound: JobPlacementCommand = {
  type: 'StartRound',
  roundId: 'r1',
  allocations,
  deadline: T1,
  holdUntil: HOLD,
  at: T0,
  prices: { 'r1-a': '300' },
  auction: null,
};

describe('job placement announcements', () => {
  it('a queued job is announced as job.queued, right after the event that queued it', () => {
    given(decider)
      .when(on({ type: 'Queue', jobId: 'job-1', tenantId: 't-1', at: T0 }))
      .then([queued, announcedQueued]);
  });

  it('the events of a round are the scheduler’s own; its placement is announced with the round', () => {
    given(decider, [queued, announcedQueued]).when(on(startRound)).then([roundStarted]);
    given(decider, [queued, announcedQueued, roundStarted])
      .when(
        on({
          type: 'RecordAnswer',
          roundId: 'r1',
          reservationId: 'r1-a',
          outcome: 'accepted',
          reasons: [],
          at: T1,
        }),
      )
      .then([
        { type: 'ReservationAccepted', data: { roundId: 'r1', reservationId: 'r1-a' } },
        { type: 'Placed', data: { roundId: 'r1', at: T1 } },
        {
          type: 'job.placed',
          data: {
            jobId: 'job-1',
            tenantId: 't-1',
            asset: 'USDC',
            allocations,
            holdUntil: HOLD,
            attempt: 1,
            at: T1,
          },
        },
      ]);
  });

  it('an auction job’s placement is announced with its clearing; a round recorded before prices were, without', () => {
    const auction = {
      rule: 'uniform-highest-placed-bid' as const,
      clearingPricePerGpuHour: '300',
      bids: [{ providerId: 'a', gpuUuid: 'a-gpu-0', pricePerGpuHour: '300' }],
    };
    const accept = on({
      type: 'RecordAnswer',
      roundId: 'r1',
      reservationId: 'r1-a',
      outcome: 'accepted',
      reasons: [],
      at: T1,
    });
    const auctioned = decider.decide(
      accept,
      [queued, { ...roundStarted, data: { ...roundStarted.data, auction } } as JobPlacementRecord].reduce(
        decider.evolve,
        decider.initialState,
      ),
    );
    const placed = auctioned.find((r) => r.type === 'job.placed')!;
    expect(placed.data).toMatchObject({ auction });
    expect(JobPlaced.schema.safeParse(placed.data).success).toBe(true);
    const { prices: _prices, auction: _auction, ...before } = roundStarted.data as Record<string, unknown>;
    const old = decider.decide(
      accept,
      [queued, { type: 'RoundStarted', data: before } as JobPlacementRecord].reduce(
        decider.evolve,
        decider.initialState,
      ),
    );
    expect(old.find((r) => r.type === 'job.placed')!.data).not.toHaveProperty('auction');
  });

  it('a job parked for capacity is announced as queued, with the core’s sentence and its attempt', () => {
    const sentence = `4 GPUs asked; ${'only 2 match; '.repeat(100)}`;
    const [, announced] = decider.decide(
      on({
        type: 'RecordScheduleFailure',
        code: 'Unschedulable',
        allocation: 'main',
        message: sentence,
        reasons: [],
        at: T1,
      }),
      decider.evolve(decider.initialState, queued),
    );
    expect(announced).toEqual({
      type: 'job.queued',
      data: { jobId: 'job-1', tenantId: 't-1', attempt: 1, reason: sentence.slice(0, 1024), at: T1 },
    });
    expect(JobQueued.schema.safeParse(announced!.data).success).toBe(true);
  });

  it('an unschedulable job is announced within the contract’s bounds', () => {
    const long = (n: number) => 'x'.repeat(n);
    const records = decider.decide(
      on({
        type: 'RecordScheduleFailure',
        code: 'UnschedulableAndUnresolvable',
        allocation: long(300),
        message: long(5000),
        reasons: Array.from({ length: 80 }, () => ({
          plugin: long(200),
          reason: long(200),
          message: long(2000),
          gpus: null,
        })),
        at: T1,
      }),
      decider.evolve(decider.initialState, queued),
    );
    expect(records.map((r) => r.type)).toEqual(['DeclaredUnschedulable', 'job.unschedulable']);
    expect(JobUnschedulable.schema.safeParse(records[1]!.data).success).toBe(true);
  });

  it('announcements change no state: the stream folds to the decider’s state', () => {
    given(decider, [queued, announcedQueued, roundStarted])
      .when(on({ type: 'ExpireRound', roundId: 'r1', at: T1 }))
      .thenState((state) => expect(state).toMatchObject({ status: 'queued', attempt: 1, excluded: ['a'] }));
    expect(decider.evolve(decider.initialState, announcedQueued)).toBe(decider.initialState);
  });

  it('tells announcements from the decider’s events by their type', () => {
    expect(
      [JobQueued, JobPlaced, JobUnschedulable].map((d) => isAnnouncement({ type: d.type } as never)),
    ).toEqual([true, true, true]);
    expect(isAnnouncement(queued)).toBe(false);
  });
});
