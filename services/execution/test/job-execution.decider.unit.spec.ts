import {
  foldEvents,
  type JobPlaced,
  type LaunchedRank,
  type PayloadOf,
  type RankStatusReported,
} from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  type ExecutionCommand,
  type ExecutionEvent,
  type ExecutionState,
  jobExecutionDecider,
  readyToLaunch,
  STATE_CARRIED_OVER,
} from '../src/domain/job-execution.decider';
import { layoutRanks } from '../src/domain/launch-spec';
import { at, edgeId, placementOf, POLICY, rankStatus, specOf, T0 } from './support/fixtures';

const decider = jobExecutionDecider(POLICY);
const [A, B] = [edgeId('A'), edgeId('B')];
const JOB = 'job-1';

const placement = (): PayloadOf<typeof JobPlaced> => ({
  jobId: JOB,
  tenantId: 'tenant-a',
  asset: 'USDC',
  allocations: placementOf([A, B]),
  holdUntil: '2030-01-01T00:05:00.000Z',
  attempt: 1,
  at: T0,
});

const submitted = (spec = specOf({ strategy: 'restart_all', maxRestarts: 1 })): ExecutionEvent => ({
  type: 'execution.job-accepted',
  data: { jobId: JOB, tenantId: 'tenant-a', gpuClasses: ['H100-80GB'], spec },
});
const placed: ExecutionEvent = { type: 'execution.job-placed', data: placement() };

/** Plays commands from `events`, returning every event decided (a test drives the aggregate). */
const play = (events: readonly ExecutionEvent[], ...commands: ExecutionCommand[]) => {
  let history = [...events];
  const decided: ExecutionEvent[] = [];
  for (const command of commands) {
    const state = foldEvents(decider, history);
    const out = decider.decide(command, state);
    decided.push(...out);
    history = [...history, ...out];
  }
  return { decided, history, state: foldEvents(decider, history) };
};

const launchCommand = (spec = specOf({ strategy: 'restart_all', maxRestarts: 1 })): ExecutionCommand => {
  const layout = layoutRanks(
    spec,
    placementOf([A, B]),
    (n) => (n.providerId === A ? '10.0.0.1' : '10.0.0.2'),
    () => 'H100-80GB',
  );
  return { type: 'LaunchJob', jobId: JOB, layout, now: at(0) };
};

const launched = (spec?: ReturnType<typeof specOf>) =>
  play([submitted(spec), placed], launchCommand(spec)).history;

const ranksOf = (history: readonly ExecutionEvent[]): readonly LaunchedRank[] =>
  foldEvents(decider, history).ranks;

const status = (
  history: readonly ExecutionEvent[],
  rank: number,
  init: Partial<PayloadOf<typeof RankStatusReported>>,
  seconds = 1,
): ExecutionCommand => {
  const r = ranksOf(history)[rank]!;
  return {
    type: 'RecordRankStatus',
    edgeId: r.providerId,
    status: rankStatus(r, { jobId: JOB, ...init }),
    now: at(seconds),
  };
};
const running = (h: readonly ExecutionEvent[], rank: number, attempt = 1, s = 1) =>
  status(h, rank, { attempt, state: 'running' }, s);
const exited = (
  h: readonly ExecutionEvent[],
  rank: number,
  exitCode: number,
  wallSeconds: number,
  attempt = 1,
  s = 2,
) => status(h, rank, { attempt, state: 'exited', exitCode, wallSeconds, exitedAt: at(s).toISOString() }, s);

const types = (events: readonly ExecutionEvent[]) => events.map((e) => e.type);

describe('job execution decider', () => {
  it('a placement before its submission is stored; the job is launchable once both arrived', () => {
    given(decider, [])
      .when({ type: 'RecordPlacement', placement: placement(), now: at(0) })
      .then([placed]);
    given(decider, [placed])
      .when({ type: 'AcceptSubmission', submission: submitted().data as never, now: at(0) })
      .thenState((s: ExecutionState) => expect(readyToLaunch(s)).toBe(true));
  });

  it('a job submitted without a spec fails when it is placed (SPEC_MISSING), with no usage', () => {
    const { decided } = play([submitted(null as never)], {
      type: 'RecordPlacement',
      placement: placement(),
      now: at(0),
    });
    expect(decided[1]).toMatchObject({
      type: 'job.failed',
      data: { reason: { code: 'SPEC_MISSING' }, usage: [] },
    });
  });

  it('LaunchJob → job.launching attempt 1 with the barrier deadline; a second LaunchJob decides nothing', () => {
    const { decided } = play([submitted(), placed], launchCommand(), launchCommand());
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({
      type: 'job.launching',
      data: {
        attempt: 1,
        worldSize: 2,
        masterAddr: '10.0.0.1',
        masterPort: 29500,
        barrierUntil: at(60).toISOString(),
      },
    });
  });

  it('a layout that cannot work fails the job with its code', () => {
    const { decided } = play([submitted(), placed], {
      type: 'LaunchJob',
      jobId: JOB,
      layout: { ok: false, code: 'PLACEMENT_MISMATCH', message: 'no' },
      now: at(0),
    });
    expect(decided).toMatchObject([{ type: 'job.failed', data: { reason: { code: 'PLACEMENT_MISMATCH' } } }]);
  });

  it('every rank running → job.running until the max duration; all exit 0 → job.completed with usage', () => {
    const h = launched();
    const { decided, state } = play(
      h,
      running(h, 0),
      running(h, 1),
      exited(h, 0, 0, 10),
      exited(h, 1, 0, 12),
    );
    expect(types(decided)).toEqual([
      'execution.rank-started',
      'execution.rank-started',
      'job.running',
      'rank.exited',
      'rank.exited',
      'job.completed',
    ]);
    expect(decided[2]).toMatchObject({
      data: { runUntil: new Date(at(1).getTime() + 3_600_000).toISOString() },
    });
    expect(decided.at(-1)).toMatchObject({
      data: {
        usage: [
          { providerId: A, gpus: 1, gpuSeconds: 10, gpuClass: 'H100-80GB' },
          { providerId: B, gpus: 1, gpuSeconds: 12, gpuClass: 'H100-80GB' },
        ],
      },
    });
    expect(state.phase).toBe('completed');
  });

  it('restart_all: a failed rank stops the gang and restarts it as attempt 2; usage counts what both attempts ran', () => {
    const h = launched();
    const first = play(h, running(h, 0), running(h, 1), exited(h, 0, 1, 5));
    expect(types(first.decided).slice(-3)).toEqual([
      'rank.exited',
      'job.restarting',
      'execution.stop-ordered',
    ]);
    expect(first.state.phase).toBe('stopping');
    // The other rank, stopped, reports its exit: the gang is down, attempt 2 launches.
    const second = play(first.history, exited(h, 1, 143, 6, 1, 3));
    expect(types(second.decided)).toEqual(['rank.exited', 'job.launching']);
    expect(second.state.attempt).toBe(2);
    // Attempt 1's late statuses never start anything again.
    const late = play(second.history, running(h, 0, 1, 4));
    expect(late.decided).toEqual([]);
    const done = play(
      second.history,
      running(h, 0, 2, 5),
      running(h, 1, 2, 5),
      exited(h, 0, 0, 20, 2, 30),
      exited(h, 1, 0, 20, 2, 30),
    );
    expect(done.decided.at(-1)).toMatchObject({
      type: 'job.completed',
      data: {
        usage: [
          { providerId: A, gpuSeconds: 25 },
          { providerId: B, gpuSeconds: 26 },
        ],
      },
    });
  });

  it('restarts exhausted → job.failed RANK_FAILED', () => {
    const spec = specOf({ strategy: 'restart_all', maxRestarts: 1 });
    let h = launched(spec);
    h = play(h, running(h, 0), running(h, 1), exited(h, 0, 1, 5), exited(h, 1, 143, 5, 1, 3)).history;
    const { decided } = play(
      h,
      running(h, 0, 2),
      running(h, 1, 2),
      exited(h, 1, 2, 5, 2, 4),
      exited(h, 0, 143, 5, 2, 5),
    );
    expect(decided.at(-1)).toMatchObject({
      type: 'job.failed',
      data: { reason: { code: 'RANK_FAILED', message: expect.stringContaining('after 1 restart(s)') } },
    });
  });

  it('stay_down: a failed rank fails the job once the others stopped', () => {
    const spec = specOf({ strategy: 'stay_down' });
    const h = launched(spec);
    const { decided } = play(h, running(h, 0), running(h, 1), exited(h, 0, 3, 5), exited(h, 1, 143, 5));
    expect(types(decided).slice(-2)).toEqual(['rank.exited', 'job.failed']);
  });

  it.each([
    { name: 'from another edge than the rank’s', edge: () => B, rank: 0, attempt: 1 },
    { name: 'of a future attempt', edge: () => A, rank: 0, attempt: 7 },
    { name: 'of a rank the job does not have', edge: () => A, rank: 99, attempt: 1 },
  ])('ignores a status $name', ({ edge, rank, attempt }) => {
    const h = launched();
    const r = ranksOf(h)[0]!;
    const command: ExecutionCommand = {
      type: 'RecordRankStatus',
      edgeId: edge(),
      status: rankStatus(
        { ...r, providerId: edge() },
        { jobId: JOB, rank, attempt, state: 'exited', exitCode: 1 },
      ),
      now: at(1),
    };
    given(decider, h).when(command).then([]);
  });

  it('start barrier: ranks missing at the deadline → stopping, then job.failed START_BARRIER', () => {
    const h = launched();
    const first = play(h, running(h, 0), { type: 'CheckDeadlines', now: at(60) });
    expect(first.decided.at(-1)).toMatchObject({
      type: 'execution.stop-ordered',
      data: { outcome: { kind: 'failed', code: 'START_BARRIER' } },
    });
    const end = play(first.history, { type: 'CheckDeadlines', now: at(80) });
    expect(end.decided).toMatchObject([{ type: 'job.failed', data: { reason: { code: 'START_BARRIER' } } }]);
  });

  it('cancel while running → stopping; when every rank exited → job.cancelled with the usage', () => {
    const h = play(launched(), ...[0, 1].map((r) => running(launched(), r))).history;
    const { decided } = play(
      h,
      { type: 'CancelJob', jobId: JOB, reason: 'user', now: at(5) },
      exited(h, 0, 143, 5, 1, 6),
      exited(h, 1, 143, 4, 1, 6),
    );
    expect(types(decided)).toEqual(['execution.stop-ordered', 'rank.exited', 'rank.exited', 'job.cancelled']);
    expect(decided.at(-1)).toMatchObject({ data: { usage: [{ gpuSeconds: 5 }, { gpuSeconds: 4 }] } });
  });

  it('cancel before placement → job.cancelled at once with no usage; a later placement is recorded (to release)', () => {
    const { decided, state } = play(
      [],
      { type: 'CancelJob', jobId: JOB, reason: null, now: at(0) },
      { type: 'RecordPlacement', placement: placement(), now: at(1) },
    );
    expect(decided[0]).toEqual({
      type: 'job.cancelled',
      data: { jobId: JOB, usage: [], cancelledAt: at(0).toISOString() },
    });
    expect(state.placement).not.toBeNull();
    expect(readyToLaunch(state)).toBe(false);
  });

  it('max duration → stopping, then job.failed MAX_DURATION', () => {
    let h = launched(specOf({ maxDuration: '10m' }));
    h = play(h, running(h, 0), running(h, 1)).history;
    const first = play(h, { type: 'CheckDeadlines', now: at(601) });
    expect(first.decided[0]).toMatchObject({
      type: 'execution.stop-ordered',
      data: { outcome: { kind: 'failed', code: 'MAX_DURATION' } },
    });
    const end = play(first.history, exited(h, 0, 143, 600, 1, 602), exited(h, 1, 143, 600, 1, 602));
    expect(end.decided.at(-1)).toMatchObject({
      type: 'job.failed',
      data: { reason: { code: 'MAX_DURATION' } },
    });
  });

  it('a rank silent for the heartbeat timeout is lost → recovery per policy', () => {
    let h = launched();
    h = play(h, running(h, 0), running(h, 1)).history;
    const { decided } = play(h, { type: 'CheckDeadlines', now: at(121) });
    expect(decided[0]).toMatchObject({
      type: 'job.restarting',
      data: { attempt: 2, reason: { code: 'RANK_LOST' } },
    });
  });

  it('silence before the service could listen (its restart) loses no rank', () => {
    let h = launched();
    h = play(h, running(h, 0), running(h, 1)).history;
    expect(play(h, { type: 'CheckDeadlines', now: at(200), listeningSince: at(150) }).decided).toEqual([]);
    expect(
      play(h, { type: 'CheckDeadlines', now: at(271), listeningSince: at(150) }).decided[0],
    ).toMatchObject({
      type: 'job.restarting',
    });
  });

  it('a barrier that ran out while the service was down runs again from when it listens', () => {
    const h = launched();
    expect(play(h, { type: 'CheckDeadlines', now: at(100), listeningSince: at(90) }).decided).toEqual([]);
    expect(
      play(h, { type: 'CheckDeadlines', now: at(150), listeningSince: at(90) }).decided[0],
    ).toMatchObject({
      type: 'execution.stop-ordered',
      data: { outcome: { code: 'START_BARRIER' } },
    });
  });

  it('statuses after the end change nothing (the final usage is published)', () => {
    const h = launched();
    const ended = play(h, { type: 'CancelJob', jobId: JOB, reason: null, now: at(1) }).history;
    expect(foldEvents(decider, ended).phase).toBe('cancelled');
    given(decider, ended)
      .when(exited(h, 0, 143, 50))
      .then([]);
  });

  it('records heartbeats a few times per heartbeat timeout, not every beat', () => {
    let h = launched();
    h = play(h, running(h, 0), running(h, 1)).history;
    expect(play(h, status(h, 0, { state: 'running', wallSeconds: 10 }, 10)).decided).toEqual([]);
    expect(play(h, status(h, 0, { state: 'running', wallSeconds: 31 }, 31)).decided).toMatchObject([
      { type: 'execution.rank-seen', data: { wallSeconds: 31 } },
    ]);
  });

  it('reports usage every period while it grows, with an increasing seq', () => {
    let h = launched();
    h = play(
      h,
      running(h, 0),
      running(h, 1),
      status(h, 0, { state: 'running', wallSeconds: 30 }, 31),
    ).history;
    const first = play(h, { type: 'CheckDeadlines', now: at(32) });
    expect(first.decided).toMatchObject([
      {
        type: 'usage.reported',
        data: {
          seq: 1,
          providers: [
            { providerId: A, gpuSeconds: 30 },
            { providerId: B, gpuSeconds: 0 },
          ],
        },
      },
    ]);
    // Nothing new, or too early: no report.
    expect(play(first.history, { type: 'CheckDeadlines', now: at(70) }).decided).toEqual([]);
  });

  it('releases once at the end', () => {
    const h = play([], { type: 'CancelJob', jobId: JOB, reason: null, now: at(0) }).history;
    given(decider, h)
      .when({ type: 'MarkReleased', reservations: [], now: at(1) })
      .then([{ type: 'execution.released', data: { jobId: JOB, at: at(1).toISOString() } }]);
    given(decider, [...h, { type: 'execution.released', data: { jobId: JOB, at: T0 } }])
      .when({ type: 'MarkReleased', reservations: [], now: at(2) })
      .then([]);
  });

  it('a placement recorded while the release of a job cancelled before it ran: only a release covering it releases the job', () => {
    const cancelled = play([submitted()], {
      type: 'CancelJob',
      jobId: JOB,
      reason: null,
      now: at(0),
    }).history;
    const late = placement();
    const placedLate = play(cancelled, { type: 'RecordPlacement', placement: late, now: at(1) }).history;
    expect(placedLate.at(-1)?.type).toBe('execution.job-placed');
    const ids = late.allocations.flatMap((a) => a.nodes.map((n) => n.reservationId));
    expect(ids.length).toBeGreaterThan(0);
    // The release that started before the placement covered nothing: the job stays owed one.
    given(decider, placedLate)
      .when({ type: 'MarkReleased', reservations: [], now: at(2) })
      .then([]);
    given(decider, placedLate)
      .when({ type: 'MarkReleased', reservations: ids, now: at(3) })
      .then([{ type: 'execution.released', data: { jobId: JOB, at: at(3).toISOString() } }]);
  });

  it('a state carried over from the first storage layout replaces what the stream held before it', () => {
    // The stream held the public events only; the carried state is the whole job, private facts too.
    const whole = launched();
    const publicOnly = whole.filter((e) => !e.type.startsWith('execution.'));
    const carried: ExecutionEvent = {
      type: STATE_CARRIED_OVER,
      data: { state: foldEvents(decider, whole) },
    };
    expect(foldEvents(decider, [...publicOnly, carried])).toEqual(foldEvents(decider, whole));
    given(decider, [...publicOnly, carried])
      .when(running(whole, 0))
      .then(decider.decide(running(whole, 0), foldEvents(decider, whole)));
  });
});
