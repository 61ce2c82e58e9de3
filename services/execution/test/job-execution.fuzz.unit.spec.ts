import { foldEvents, RankStatusReported } from '@gpunet/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ExecutionCommand,
  type ExecutionEvent,
  isTerminal,
  jobExecutionDecider,
  reservationsOf,
} from '../src/domain/job-execution.decider';
import { layoutRanks } from '../src/domain/launch-spec';
import { totalGpuSeconds } from '../src/domain/usage';
import { at, edgeId, placementOf, specOf, T0 } from './support/fixtures';

const decider = jobExecutionDecider({
  barrierMs: 60_000,
  heartbeatTimeoutMs: 120_000,
  usageReportMs: 30_000,
  stopWaitMs: 20_000,
});
const [A, B, C] = [edgeId('A'), edgeId('B'), edgeId('C')];
const JOB = 'job-fz';
const spec = specOf({ strategy: 'restart_all', maxRestarts: 2 });
const layout = layoutRanks(
  spec,
  placementOf([A, B]),
  () => '10.0.0.1',
  () => 'H100-80GB',
);

/** The placement's reservation ids (a release covers some, all or none of them). */
const reservationIds = placementOf([A, B]).flatMap((a) => a.nodes.map((n) => n.reservationId));

const start: ExecutionEvent[] = [
  { type: 'execution.job-accepted', data: { jobId: JOB, tenantId: 't', gpuClasses: [], spec } },
  {
    type: 'execution.job-placed',
    data: {
      jobId: JOB,
      tenantId: 't',
      asset: 'USDC',
      allocations: placementOf([A, B]),
      holdUntil: T0,
      attempt: 1,
      at: T0,
    },
  },
];

/** Any status the contract lets through, from any edge, about any rank and attempt. */
const statusArb = fc
  .record({
    edge: fc.constantFrom(A, B, C),
    payloadEdge: fc.constantFrom(A, B, C),
    jobId: fc.constantFrom(JOB, 'other-job'),
    attempt: fc.integer({ min: 1, max: 4 }),
    rank: fc.integer({ min: 0, max: 3 }),
    state: fc.constantFrom('running' as const, 'exited' as const),
    exitCode: fc.option(fc.integer({ min: -255, max: 255 })),
    signal: fc.option(fc.constantFrom('SIGKILL', 'SIGTERM')),
    wallSeconds: fc.double({ min: 0, max: 1e6, noNaN: true }),
    second: fc.integer({ min: 0, max: 4000 }),
  })
  .map((s): ExecutionCommand => ({
    type: 'RecordRankStatus',
    edgeId: s.edge,
    status: RankStatusReported.schema.parse({
      edgeId: s.payloadEdge,
      // The decider never sees a signature (the handler checked it).
      publicKey: s.payloadEdge,
      sequence: 1,
      signedAt: T0,
      signature: 'A'.repeat(86),
      jobId: s.jobId,
      attempt: s.attempt,
      rank: s.rank,
      state: s.state,
      startedAt: T0,
      exitedAt: s.state === 'exited' ? T0 : null,
      exitCode: s.exitCode,
      signal: s.signal,
      stopReason: null,
      wallSeconds: s.wallSeconds,
      reportedAt: T0,
    }),
    now: at(s.second),
  }));

const commandArb: fc.Arbitrary<ExecutionCommand> = fc.oneof(
  { weight: 6, arbitrary: statusArb },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 0, max: 4000 })
      .map((s): ExecutionCommand => ({ type: 'CheckDeadlines', now: at(s) })),
  },
  {
    weight: 1,
    arbitrary: fc.constant<ExecutionCommand>({ type: 'CancelJob', jobId: JOB, reason: null, now: at(10) }),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        providerId: fc.constantFrom(A, B, C),
        held: fc.subarray(reservationIds),
        second: fc.nat(4000),
      })
      .map(({ providerId, held, second }): ExecutionCommand => ({
        type: 'RecordReservations',
        providerId,
        held,
        reportedAt: at(second).toISOString(),
        now: at(second),
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        providerId: fc.constantFrom(A, B, C),
        online: fc.boolean(),
        second: fc.integer({ min: -5, max: 4000 }),
      })
      .map(({ providerId, online, second }): ExecutionCommand => ({
        type: 'RecordProviderLiveness',
        providerId,
        online,
        at: at(second).toISOString(),
        lastSeenAt: online ? null : at(Math.max(0, second - 5)).toISOString(),
        now: at(Math.max(0, second)),
      })),
  },
  {
    weight: 1,
    arbitrary: fc.nat(4000).map((second): ExecutionCommand => ({
      type: 'StopForEscrow',
      jobId: JOB,
      unbilledGpuSeconds: 1,
      now: at(second),
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .subarray(reservationIds)
      .map((reservations): ExecutionCommand => ({ type: 'MarkReleased', reservations, now: at(10) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ rank: fc.integer({ min: 0, max: 3 }), attempt: fc.integer({ min: 1, max: 3 }) })
      .map(({ rank, attempt }): ExecutionCommand => ({
        type: 'RecordStartReply',
        jobId: JOB,
        attempt,
        rank,
        reply: { outcome: 'started', jobId: JOB, attempt, rank, created: true, startedAt: T0 },
        now: at(1),
      })),
  },
);

describe('job execution decider under hostile and out-of-order input', () => {
  it('never throws, never un-ends a job, never lowers the attempt, usage or its seq', () => {
    fc.assert(
      fc.property(fc.array(commandArb, { maxLength: 60 }), (commands) => {
        let history: ExecutionEvent[] = [...start];
        let state = foldEvents(decider, history);
        const launch = decider.decide({ type: 'LaunchJob', jobId: JOB, layout, now: at(0) }, state);
        history = [...history, ...launch];
        state = foldEvents(decider, history);
        let ended = false;
        let seq = 0;
        let reported = 0;
        for (const command of commands) {
          const before = state;
          const out = decider.decide(command, state);
          for (const e of out) {
            if (e.type === 'usage.reported') {
              expect(e.data.seq).toBe(seq + 1);
              expect(totalGpuSeconds(e.data.providers)).toBeGreaterThan(reported);
              seq = e.data.seq;
              reported = totalGpuSeconds(e.data.providers);
            }
            // Every published payload stays on contract.
            if (e.type === 'job.completed' || e.type === 'job.failed' || e.type === 'job.cancelled')
              for (const u of e.data.usage) expect(Number.isSafeInteger(u.gpuSeconds)).toBe(true);
          }
          state = out.reduce(decider.evolve, state);
          if (ended) expect(isTerminal(state.phase)).toBe(true);
          ended = isTerminal(state.phase);
          expect(state.attempt).toBeGreaterThanOrEqual(before.attempt);
          for (const [k, v] of Object.entries(before.meter)) expect(state.meter[k]).toBeGreaterThanOrEqual(v);
          // Statuses from the wrong edge or another job never change anything.
          if (command.type === 'RecordRankStatus') {
            const r = state.ranks.find((x) => x.rank === command.status.rank);
            if (
              !r ||
              r.providerId !== command.edgeId ||
              command.status.edgeId !== command.edgeId ||
              command.status.jobId !== JOB
            )
              expect(out).toEqual([]);
          }
          // A provider lost and not back: no attempt is launched while it is gone.
          if (
            out.some((e) => e.type === 'job.launching') &&
            state.ranks.some((r) => state.lostProviders.includes(r.providerId))
          )
            throw new Error(`launched onto a lost provider: ${JSON.stringify(state.lostProviders)}`);
          if (state.phase === 'completed')
            for (const r of state.ranks) expect(state.exited[r.rank]).toEqual({ exitCode: 0, signal: null });
          // Released only by a release that covered every reservation the job holds.
          if (command.type === 'MarkReleased' && out.length > 0)
            for (const r of reservationsOf(state)) expect(command.reservations).toContain(r.reservationId);
        }
      }),
      { numRuns: 400, seed: 40 },
    );
  });
});
