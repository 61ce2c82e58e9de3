import type { PlacedAllocation } from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  type JobPlacementEvent,
  jobPlacementDecider,
  JobPlacementError,
} from '../src/domain/job-placement.decider';

const decider = jobPlacementDecider({ maxAttempts: 3 });
const T0 = '2030-01-01T00:00:00.000Z';
const T1 = '2030-01-01T00:00:01.000Z';
const T2 = '2030-01-01T00:00:02.000Z';
const DEADLINE = '2030-01-01T00:00:05.000Z';
const HOLD = '2030-01-01T00:05:00.000Z';

const node = (provider: string, round = 'r1') => ({
  providerId: provider,
  hostId: `${provider}-host`,
  gpuUuids: [`${provider}-gpu-0`],
  reservationId: `${round}-${provider}`,
  ranks: 1,
});
const allocation = (providers: readonly string[], round = 'r1'): PlacedAllocation[] => [
  {
    name: 'main',
    gpuCount: providers.length,
    nodes: providers.map((p) => node(p, round)),
    predictedStepUs: 1000,
    pricePerHourMinor: '300',
  },
];
const target = (provider: string, round = 'r1') => ({
  reservationId: `${round}-${provider}`,
  providerId: provider,
});

const queued: JobPlacementEvent = {
  type: 'Queued',
  data: { jobId: 'job-1', tenantId: 't-1', attempt: 1, reason: null, at: T0 },
};
const roundStarted = (providers: readonly string[], round = 'r1', attempt = 1): JobPlacementEvent => ({
  type: 'RoundStarted',
  data: {
    roundId: round,
    attempt,
    allocations: allocation(providers, round),
    deadline: DEADLINE,
    holdUntil: HOLD,
    at: T0,
    prices: {},
    auction: null,
  },
});
const accepted = (provider: string, round = 'r1'): JobPlacementEvent => ({
  type: 'ReservationAccepted',
  data: { roundId: round, reservationId: `${round}-${provider}` },
});
const answer = (provider: string, outcome: 'accepted' | 'declined', round = 'r1') => ({
  type: 'RecordAnswer' as const,
  roundId: round,
  reservationId: `${round}-${provider}`,
  outcome,
  reasons: outcome === 'declined' ? ['GPU_BUSY: GPU a-gpu-0 is held by another job'] : [],
  at: T1,
});

describe('job placement decider', () => {
  it('queues a funded job once', () => {
    given(decider).when({ type: 'Queue', jobId: 'job-1', tenantId: 't-1', at: T0 }).then([queued]);
    given(decider, [queued]).when({ type: 'Queue', jobId: 'job-1', tenantId: 't-1', at: T1 }).then([]);
  });

  it('starts a reservation round for a queued job', () => {
    given(decider, [queued])
      .when({
        type: 'StartRound',
        roundId: 'r1',
        allocations: allocation(['a', 'b']),
        deadline: DEADLINE,
        holdUntil: HOLD,
        at: T0,
        prices: {},
        auction: null,
      })
      .then([roundStarted(['a', 'b'])]);
    given(decider)
      .when({
        type: 'StartRound',
        roundId: 'r1',
        allocations: allocation(['a']),
        deadline: DEADLINE,
        holdUntil: HOLD,
        at: T0,
        prices: {},
        auction: null,
      })
      .thenThrows({ code: 'NOT_QUEUED' });
    given(decider, [queued])
      .when({
        type: 'StartRound',
        roundId: 'r1',
        allocations: [],
        deadline: DEADLINE,
        holdUntil: HOLD,
        at: T0,
        prices: {},
        auction: null,
      })
      .thenThrows(JobPlacementError);
  });

  it('all accept before the deadline → placed', () => {
    given(decider, [queued, roundStarted(['a', 'b'])])
      .when(answer('a', 'accepted'))
      .then([accepted('a')]);
    given(decider, [queued, roundStarted(['a', 'b']), accepted('a')])
      .when(answer('b', 'accepted'))
      .then([accepted('b'), { type: 'Placed', data: { roundId: 'r1', at: T1 } }]);
  });

  it('a repeated accept decides nothing', () => {
    given(decider, [queued, roundStarted(['a', 'b']), accepted('a')])
      .when(answer('a', 'accepted'))
      .then([]);
  });

  it('one declines → every reservation released and the job requeued without the decliner', () => {
    given(decider, [queued, roundStarted(['a', 'b', 'c']), accepted('a')])
      .when(answer('b', 'declined'))
      .then([
        {
          type: 'ReservationDeclined',
          data: {
            roundId: 'r1',
            reservationId: 'r1-b',
            providerId: 'b',
            reasons: ['GPU_BUSY: GPU a-gpu-0 is held by another job'],
          },
        },
        {
          type: 'RoundAborted',
          data: {
            roundId: 'r1',
            cause: 'declined',
            release: [target('a'), target('b'), target('c')],
            exclude: ['b'],
            reason: 'provider b declined: GPU_BUSY: GPU a-gpu-0 is held by another job',
            at: T1,
          },
        },
        {
          type: 'Queued',
          data: {
            jobId: 'job-1',
            tenantId: 't-1',
            attempt: 2,
            reason: 'provider b declined: GPU_BUSY: GPU a-gpu-0 is held by another job',
            at: T1,
          },
        },
      ]);
  });

  it('after a decline the state excludes the decliner and the next round is attempt 2', () => {
    const history = [
      queued,
      roundStarted(['a', 'b']),
      ...decider.decide(answer('b', 'declined'), stateOf([queued, roundStarted(['a', 'b'])])),
    ];
    expect(stateOf(history)).toMatchObject({
      status: 'queued',
      excluded: ['b'],
      attempt: 1,
      abortedRounds: ['r1'],
    });
    given(decider, history)
      .when({
        type: 'StartRound',
        roundId: 'r2',
        allocations: allocation(['a', 'c'], 'r2'),
        deadline: DEADLINE,
        holdUntil: HOLD,
        at: T0,
        prices: {},
        auction: null,
      })
      .then([roundStarted(['a', 'c'], 'r2', 2)]);
  });

  it('an accept arriving after its round was aborted is released again (idempotent release)', () => {
    const history = [
      queued,
      roundStarted(['a', 'b']),
      ...decider.decide(answer('b', 'declined'), stateOf([queued, roundStarted(['a', 'b'])])),
    ];
    given(decider, history)
      .when(answer('a', 'accepted'))
      .then([{ type: 'LateReservationReleased', data: { roundId: 'r1', release: target('a') } }]);
    // a late decline of an aborted round changes nothing
    given(decider, history).when(answer('a', 'declined')).then([]);
  });

  it('deadline passes → release all, requeue, leave out those that never answered', () => {
    given(decider, [queued, roundStarted(['a', 'b', 'c']), accepted('a')])
      .when({ type: 'ExpireRound', roundId: 'r1', at: DEADLINE })
      .then([
        {
          type: 'RoundAborted',
          data: {
            roundId: 'r1',
            cause: 'timeout',
            release: [target('a'), target('b'), target('c')],
            exclude: ['b', 'c'],
            reason: 'no answer before the deadline from b, c',
            at: DEADLINE,
          },
        },
        {
          type: 'Queued',
          data: {
            jobId: 'job-1',
            tenantId: 't-1',
            attempt: 2,
            reason: 'no answer before the deadline from b, c',
            at: DEADLINE,
          },
        },
      ]);
  });

  it('a deadline of a finished or other round decides nothing', () => {
    given(decider, [
      queued,
      roundStarted(['a']),
      accepted('a'),
      { type: 'Placed', data: { roundId: 'r1', at: T1 } },
    ])
      .when({ type: 'ExpireRound', roundId: 'r1', at: DEADLINE })
      .then([]);
    given(decider, [queued, roundStarted(['a'])])
      .when({ type: 'ExpireRound', roundId: 'r0', at: DEADLINE })
      .then([]);
  });

  it('after maxAttempts failed rounds the job is unschedulable (RetriesExhausted)', () => {
    given(decider, [queued, roundStarted(['a'], 'r3', 3)])
      .when({ type: 'ExpireRound', roundId: 'r3', at: DEADLINE })
      .then([
        {
          type: 'RoundAborted',
          data: {
            roundId: 'r3',
            cause: 'timeout',
            release: [target('a', 'r3')],
            exclude: ['a'],
            reason: 'no answer before the deadline from a',
            at: DEADLINE,
          },
        },
        {
          type: 'DeclaredUnschedulable',
          data: {
            code: 'RetriesExhausted',
            allocation: null,
            message: '3 reservation rounds failed; the last: no answer before the deadline from a',
            reasons: [],
            at: DEADLINE,
          },
        },
      ]);
  });

  it('cancel while reserving → release every reservation; cancel while queued → nothing to release', () => {
    given(decider, [queued, roundStarted(['a', 'b']), accepted('a')])
      .when({ type: 'Cancel', at: T2 })
      .then([{ type: 'Cancelled', data: { release: [target('a'), target('b')], at: T2 } }]);
    given(decider, [queued])
      .when({ type: 'Cancel', at: T2 })
      .then([{ type: 'Cancelled', data: { release: [], at: T2 } }]);
    given(decider, [queued, { type: 'Cancelled', data: { release: [], at: T2 } }])
      .when({ type: 'Cancel', at: T2 })
      .then([]);
  });

  it('an accept after cancel is released', () => {
    given(decider, [
      queued,
      roundStarted(['a', 'b']),
      { type: 'Cancelled', data: { release: [target('a'), target('b')], at: T2 } },
    ])
      .when(answer('b', 'accepted'))
      .then([{ type: 'LateReservationReleased', data: { roundId: 'r1', release: target('b') } }]);
  });

  it('a scheduling failure: waiting helps → wait for capacity; unresolvable → unschedulable with the core’s reasons', () => {
    const reasons = [{ plugin: 'vram', reason: 'InsufficientVram', message: 'less than 40 GB', gpus: 12 }];
    given(decider, [queued])
      .when({
        type: 'RecordScheduleFailure',
        code: 'Unschedulable',
        allocation: 'main',
        message: '4 GPUs asked; only 2 match (2 more are busy)',
        reasons,
        at: T1,
      })
      .then([
        {
          type: 'ParkedForCapacity',
          data: { message: '4 GPUs asked; only 2 match (2 more are busy)', reasons, at: T1 },
        },
      ]);
    given(decider, [queued])
      .when({
        type: 'RecordScheduleFailure',
        code: 'UnschedulableAndUnresolvable',
        allocation: 'main',
        message: '16 GPUs asked; only 8 match ≥ 40 GB',
        reasons,
        at: T1,
      })
      .then([
        {
          type: 'DeclaredUnschedulable',
          data: {
            code: 'UnschedulableAndUnresolvable',
            allocation: 'main',
            message: '16 GPUs asked; only 8 match ≥ 40 GB',
            reasons,
            at: T1,
          },
        },
      ]);
  });

  describe('maximum wait', () => {
    const reasons = [{ plugin: 'vram', reason: 'InsufficientVram', message: 'less than 40 GB', gpus: 12 }];
    const waiting: JobPlacementEvent = {
      type: 'ParkedForCapacity',
      data: { message: '4 GPUs asked; only 2 match', reasons, at: T1 },
    };
    const passed = { type: 'ExpireWait' as const, maxWaitMs: 3_600_000, at: T2 };

    it('waiting for capacity → unschedulable (Unschedulable) with the last reasons', () => {
      given(decider, [queued, waiting])
        .when(passed)
        .then([
          {
            type: 'DeclaredUnschedulable',
            data: {
              code: 'Unschedulable',
              allocation: null,
              message: 'queued longer than the maximum wait of 1 h; last: 4 GPUs asked; only 2 match',
              reasons,
              at: T2,
            },
          },
        ]);
    });

    it('queued, never tried → unschedulable saying so', () => {
      given(decider, [queued])
        .when({ ...passed, maxWaitMs: 90_000 })
        .then([
          {
            type: 'DeclaredUnschedulable',
            data: {
              code: 'Unschedulable',
              allocation: null,
              message: 'queued longer than the maximum wait of 90 s; last: no placement was tried',
              reasons: [],
              at: T2,
            },
          },
        ]);
    });

    it('reserving → the round decides: all accept → placed', () => {
      given(decider, [queued, roundStarted(['a']), { type: 'WaitExpired', data: { at: T1 } }])
        .when(answer('a', 'accepted'))
        .then([accepted('a'), { type: 'Placed', data: { roundId: 'r1', at: T1 } }]);
      given(decider, [queued, roundStarted(['a'])])
        .when(passed)
        .then([{ type: 'WaitExpired', data: { at: T2 } }]);
    });

    it('reserving → a failed round ends the job instead of requeueing it', () => {
      const events = decider.decide(
        { type: 'ExpireRound', roundId: 'r1', at: T2 },
        stateOf([queued, waiting, roundStarted(['a']), { type: 'WaitExpired', data: { at: T1 } }]),
      );
      expect(events.map((e) => e.type)).toEqual(['RoundAborted', 'DeclaredUnschedulable']);
      expect(events[1]!.data).toMatchObject({ code: 'Unschedulable', reasons });
    });

    it('placed, cancelled or unschedulable jobs ignore it', () => {
      given(decider, [
        queued,
        roundStarted(['a']),
        accepted('a'),
        { type: 'Placed', data: { roundId: 'r1', at: T1 } },
      ])
        .when(passed)
        .then([]);
      given(decider, [queued, { type: 'Cancelled', data: { release: [], at: T1 } }])
        .when(passed)
        .then([]);
    });
  });
});

function stateOf(events: readonly JobPlacementEvent[]) {
  return events.reduce(decider.evolve, decider.initialState);
}
