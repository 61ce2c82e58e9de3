import {
  foldEvents,
  type JobCompleted,
  type JobFailed,
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
import type { ProviderUsage } from '../src/domain/usage';
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
      // An honest edge: what it reports is what execution saw (started at 1 s).
      exited(h, 0, 0, 10, 1, 11),
      exited(h, 1, 0, 12, 1, 13),
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
    const first = play(h, running(h, 0), running(h, 1), exited(h, 0, 1, 5, 1, 6));
    // A non-zero exit is the job's own code failing: no fault of the provider's.
    expect(types(first.decided).slice(-3)).toEqual([
      'rank.exited',
      'job.restarting',
      'execution.stop-ordered',
    ]);
    expect(first.state.phase).toBe('stopping');
    // The other rank, stopped, reports its exit: the gang is down, attempt 2 launches.
    const second = play(first.history, exited(h, 1, 143, 6, 1, 7));
    expect(types(second.decided)).toEqual(['rank.exited', 'job.launching']);
    expect(second.state.attempt).toBe(2);
    // Attempt 1's late statuses never start anything again.
    const late = play(second.history, running(h, 0, 1, 4));
    expect(late.decided).toEqual([]);
    const done = play(
      second.history,
      running(h, 0, 2, 10),
      running(h, 1, 2, 10),
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
    expect(decided[1]).toMatchObject({
      type: 'job.restarting',
      data: { attempt: 2, reason: { code: 'RANK_LOST' } },
    });
  });

  it('silence before the service could listen (its restart) loses no rank', () => {
    let h = launched();
    h = play(h, running(h, 0), running(h, 1)).history;
    expect(play(h, { type: 'CheckDeadlines', now: at(200), listeningSince: at(150) }).decided).toEqual([]);
    expect(
      play(h, { type: 'CheckDeadlines', now: at(271), listeningSince: at(150) }).decided[1],
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

  it('an auction job’s usage reports and final usage carry its clearing price; a fixed-price job’s none', () => {
    const auction = {
      rule: 'uniform-highest-placed-bid' as const,
      clearingPricePerGpuHour: '2600000',
      bids: placementOf([A, B]).flatMap((a) =>
        a.nodes.flatMap((n) =>
          n.gpuUuids.map((gpuUuid) => ({ providerId: n.providerId, gpuUuid, pricePerGpuHour: '2600000' })),
        ),
      ),
    };
    const auctioned: ExecutionEvent = { type: 'execution.job-placed', data: { ...placement(), auction } };
    const run = (placedEvent: ExecutionEvent) => {
      let h = play([submitted(), placedEvent], launchCommand()).history;
      h = play(
        h,
        running(h, 0),
        running(h, 1),
        status(h, 0, { state: 'running', wallSeconds: 30 }, 31),
      ).history;
      const report = play(h, { type: 'CheckDeadlines', now: at(32) }).decided;
      const ended = play(h, exited(h, 0, 0, 40, 1, 41), exited(h, 1, 0, 40, 1, 41)).decided;
      const done = ended.find((e) => e.type === 'job.completed')?.data as PayloadOf<typeof JobCompleted>;
      return {
        reported: (report.find((e) => e.type === 'usage.reported')!.data as { providers: ProviderUsage[] })
          .providers,
        final: done.usage,
      };
    };
    const paid = run(auctioned);
    expect(paid.reported.map((u) => u.agreedPricePerGpuHour)).toEqual(['2600000', '2600000']);
    expect(paid.final.map((u) => u.agreedPricePerGpuHour)).toEqual(['2600000', '2600000']);
    const fixed = run(placed);
    for (const u of [...fixed.reported, ...fixed.final])
      expect(u).not.toHaveProperty('agreedPricePerGpuHour');
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

describe('usage from execution’s own observations', () => {
  /** Both ranks seen running at 1 s (execution’s clock). */
  const runningBoth = () => {
    const h = launched();
    return play(h, running(h, 0), running(h, 1)).history;
  };
  const completed = (events: readonly ExecutionEvent[]) =>
    events.find((e) => e.type === 'job.completed')?.data as PayloadOf<typeof JobCompleted>;

  it('an edge within the tolerance of the observation is paid the lower figure, undisputed', () => {
    const h = runningBoth();
    // Observed: 1 s → 101 s = 100 s. A claims 104 s (within 5 s), B 97 s (below).
    const { decided } = play(h, exited(h, 0, 0, 104, 1, 101), exited(h, 1, 0, 97, 1, 101));
    expect(types(decided)).not.toContain('usage.disputed');
    expect(completed(decided).usage).toMatchObject([
      { providerId: A, gpuSeconds: 100 },
      { providerId: B, gpuSeconds: 97 },
    ]);
  });

  it('an edge that reports twice what execution observed is paid the observation, and the dispute is recorded', () => {
    let h = runningBoth();
    // Heartbeats while running: usage so far is the lower figure too.
    h = play(h, status(h, 0, { state: 'running', wallSeconds: 120 }, 61)).history;
    const report = play(h, { type: 'CheckDeadlines', now: at(62) }).decided;
    expect(report).toMatchObject([
      {
        type: 'usage.reported',
        data: {
          providers: [
            { providerId: A, gpuSeconds: 60 },
            { providerId: B, gpuSeconds: 0 },
          ],
        },
      },
    ]);
    const { decided } = play(h, exited(h, 0, 0, 200, 1, 101), exited(h, 1, 0, 100, 1, 101));
    expect(types(decided)).toEqual(['rank.exited', 'usage.disputed', 'rank.exited', 'job.completed']);
    expect(decided[1]).toEqual({
      type: 'usage.disputed',
      data: {
        jobId: JOB,
        providerId: A,
        attempt: 1,
        rank: 0,
        edgeSeconds: 200,
        observedSeconds: 100,
        paidSeconds: 100,
        at: at(101).toISOString(),
      },
    });
    expect(completed(decided).usage).toMatchObject([
      { providerId: A, gpuSeconds: 100 },
      { providerId: B, gpuSeconds: 100 },
    ]);
  });

  it('the tolerance is the larger of its seconds and its percent', () => {
    const lenient = jobExecutionDecider({ ...POLICY, usageTolerance: { seconds: 5, percent: 50 } });
    const h = runningBoth();
    const state = foldEvents(lenient, h);
    const out = lenient.decide(exited(h, 0, 0, 140, 1, 101), state);
    expect(types(out)).not.toContain('usage.disputed');
  });

  it('a rank never seen running is paid nothing, whatever its edge claims for it', () => {
    // Attempt 1 failed at the barrier with rank 1 never started; B later claims an hour for it.
    let h = launched(specOf({ strategy: 'restart_all', maxRestarts: 1 }));
    h = play(h, running(h, 0), exited(h, 0, 1, 5, 1, 6), exited(h, 0, 1, 5, 1, 6)).history;
    h = play(h, { type: 'CheckDeadlines', now: at(40) }).history;
    const state = foldEvents(decider, h);
    expect(state.attempt).toBe(2);
    const late = play(h, status(h, 1, { attempt: 1, state: 'exited', exitCode: 0, wallSeconds: 3600 }, 41));
    expect(late.state.meter['1:1']).toBe(3600);
    const paid = play(late.history, running(h, 0, 2, 50), running(h, 1, 2, 50));
    const end = play(paid.history, exited(h, 0, 0, 10, 2, 60), exited(h, 1, 0, 10, 2, 60));
    expect(completed(end.decided).usage).toMatchObject([
      { providerId: A, gpuSeconds: 15 },
      { providerId: B, gpuSeconds: 10 },
    ]);
  });
});

describe('faults with evidence', () => {
  const ended = (events: readonly ExecutionEvent[]) =>
    events.find((e) => e.type === 'job.completed' || e.type === 'job.failed')?.data as
      PayloadOf<typeof JobCompleted> | PayloadOf<typeof JobFailed>;

  it('an edge silent for the heartbeat timeout is host-lost, verified, with when it was last heard of', () => {
    let h = launched(specOf({ strategy: 'stay_down' }));
    h = play(
      h,
      running(h, 0),
      running(h, 1),
      status(h, 1, { state: 'running', wallSeconds: 130 }, 130),
    ).history;
    // A is last heard of at 1 s; at 121 s it is lost. B, stopped, exits.
    const lost = play(h, { type: 'CheckDeadlines', now: at(121) });
    expect(lost.decided[0]).toMatchObject({
      type: 'execution.fault-recorded',
      data: { providerId: A, kind: 'host-lost', verified: true },
    });
    // A never answers the stop: the job ends when the stop wait ran out.
    const end = play(lost.history, exited(h, 1, 143, 131, 1, 131), { type: 'CheckDeadlines', now: at(142) });
    expect(ended(end.decided).faults).toEqual([
      {
        providerId: A,
        kind: 'host-lost',
        verified: true,
        // Paid what it ran while execution heard of it: seen at 1 s, never again.
        billableGpuSeconds: 0,
        detail: expect.stringContaining(`last heard of at ${at(1).toISOString()}`),
      },
    ]);
  });

  it.each([
    { exitCode: 137, fault: true, what: "a container's 128 + SIGKILL" },
    { exitCode: 1, fault: false, what: "the job's own code failing" },
    { exitCode: 2, fault: false, what: "the job's own code failing" },
  ])('exit code $exitCode ($what): a rank-crashed fault is $fault', ({ exitCode, fault }) => {
    const h = launched();
    const { decided } = play(h, running(h, 0), running(h, 1), exited(h, 0, exitCode, 5, 1, 6));
    expect(types(decided).includes('execution.fault-recorded')).toBe(fault);
  });

  it('a rank killed on its host (a signal execution did not send) is rank-crashed, unverified; the restarted job completes with it', () => {
    const h = launched();
    const first = play(
      h,
      running(h, 0),
      running(h, 1),
      status(
        h,
        0,
        { state: 'exited', signal: 'SIGKILL', wallSeconds: 10, exitedAt: at(11).toISOString() },
        11,
      ),
      exited(h, 1, 143, 11, 1, 12),
    );
    const done = play(
      first.history,
      running(h, 0, 2, 20),
      running(h, 1, 2, 20),
      exited(h, 0, 0, 10, 2, 30),
      exited(h, 1, 0, 10, 2, 30),
    );
    expect(ended(done.decided)).toMatchObject({
      usage: [
        { providerId: A, gpuSeconds: 20 },
        { providerId: B, gpuSeconds: 21 },
      ],
      faults: [
        {
          providerId: A,
          kind: 'rank-crashed',
          verified: false,
          billableGpuSeconds: 20,
          detail: expect.stringContaining('signal SIGKILL'),
        },
      ],
    });
  });

  it('ranks execution stopped itself (cancel, restart) are no fault', () => {
    const h = play(launched(), ...[0, 1].map((r) => running(launched(), r))).history;
    const { state } = play(
      h,
      { type: 'CancelJob', jobId: JOB, reason: 'user', now: at(5) },
      exited(h, 0, 143, 5, 1, 6),
      exited(h, 1, 143, 4, 1, 6),
    );
    expect(state.faults).toEqual([]);
  });

  it('an edge that gives up a reservation of the running job abandoned it (verified: it signed the report)', () => {
    let h = launched(specOf({ strategy: 'stay_down' }));
    h = play(h, running(h, 0), running(h, 1)).history;
    const held = foldEvents(decider, h).placement!.allocations.flatMap((a) =>
      a.nodes.filter((n) => n.providerId === B).map((n) => n.reservationId),
    );
    const report = (providerId: string, reservations: readonly string[], second = 20): ExecutionCommand => ({
      type: 'RecordReservations',
      providerId,
      held: reservations,
      reportedAt: at(second).toISOString(),
      now: at(20),
    });
    // B still holding its reservation, another edge's report, or a report from before the gang ran
    // (a replayed backlog): nothing.
    expect(play(h, report(B, held)).decided).toEqual([]);
    expect(play(h, report('UOTHER', [])).decided).toEqual([]);
    expect(play(h, report(B, [], 1)).decided).toEqual([]);
    const gone = play(h, report(B, []));
    expect(gone.decided[0]).toMatchObject({
      type: 'execution.fault-recorded',
      data: { providerId: B, kind: 'abandoned', verified: true },
    });
    const end = play(gone.history, exited(h, 0, 143, 20, 1, 21), exited(h, 1, 143, 20, 1, 21));
    expect(ended(end.decided)).toMatchObject({
      reason: { code: 'RESERVATION_ABANDONED' },
      faults: [{ providerId: B, kind: 'abandoned', verified: true, billableGpuSeconds: 20 }],
    });
  });
});

describe("discovery's liveness: a provider of the gang goes offline", () => {
  const liveness = (providerId: string, online: boolean, s: number, lastSeen: number | null = 1) =>
    ({
      type: 'RecordProviderLiveness',
      providerId,
      online,
      at: at(s).toISOString(),
      lastSeenAt: online || lastSeen === null ? null : at(lastSeen).toISOString(),
      now: at(s),
    }) as ExecutionCommand;
  const runningGang = (spec?: ReturnType<typeof specOf>) => {
    const h = launched(spec);
    return play(h, running(h, 0), running(h, 1)).history;
  };
  const failedOf = (events: readonly ExecutionEvent[]): PayloadOf<typeof JobFailed> | undefined => {
    const e = events.find((x) => x.type === 'job.failed');
    return e?.type === 'job.failed' ? e.data : undefined;
  };

  it('loses its ranks at once (a verified host-lost), and with restarts left does not restart onto it', () => {
    const h = runningGang();
    const lost = play(h, liveness(A, false, 10));
    expect(types(lost.decided)).toEqual([
      'execution.provider-lost',
      'execution.fault-recorded',
      'execution.stop-ordered',
    ]);
    expect(lost.decided[1]).toMatchObject({
      data: {
        providerId: A,
        kind: 'host-lost',
        verified: true,
        detail: expect.stringContaining(`discovery declared ${A} offline at ${at(10).toISOString()}`),
      },
    });
    expect(lost.decided[2]).toMatchObject({
      data: {
        outcome: {
          kind: 'failed',
          code: 'RANK_LOST',
          message: expect.stringMatching(/went offline .*replace_failed_node is not supported yet/),
        },
      },
    });
    // B's rank stops; A's never answers, and the job does not wait the stop wait for it.
    const end = play(lost.history, exited(h, 1, 143, 11, 1, 11));
    expect(failedOf(end.decided)).toMatchObject({
      reason: { code: 'RANK_LOST' },
      failedAt: at(11).toISOString(),
    });
    expect(failedOf(end.decided)?.faults).toEqual([
      expect.objectContaining({ providerId: A, kind: 'host-lost', verified: true }),
    ]);
  });

  it('with stay_down the job fails RANK_LOST, the same evidence', () => {
    const h = runningGang(specOf({ strategy: 'stay_down' }));
    const { decided } = play(h, liveness(A, false, 10), exited(h, 1, 143, 11, 1, 11));
    expect(failedOf(decided)).toMatchObject({ reason: { code: 'RANK_LOST' } });
    expect(types(decided)).toContain('execution.fault-recorded');
  });

  it('lost while the gang stops for a restart: not waited for, and no restart is launched onto it', () => {
    const h = runningGang();
    const restarting = play(h, exited(h, 1, 1, 5, 1, 5));
    expect(types(restarting.decided)).toContain('job.restarting');
    const { decided } = play(restarting.history, liveness(A, false, 6));
    expect(types(decided)).toEqual(['execution.provider-lost', 'execution.fault-recorded', 'job.failed']);
    expect(failedOf(decided)?.faults).toEqual([
      expect.objectContaining({ providerId: A, kind: 'host-lost', verified: true }),
    ]);
    expect(failedOf(decided)?.reason.message).toMatch(
      new RegExp(
        `^the gang cannot restart without ${A}, offline \\(replace_failed_node is not supported yet\\)$`,
      ),
    );
  });

  it('back online before the stop ended: the restart runs on it', () => {
    const h = runningGang();
    const restarting = play(h, exited(h, 0, 1, 5, 1, 5)).history;
    // A's rank has exited; B is lost, then heard from again, and its rank reports its exit.
    const { decided } = play(
      restarting,
      liveness(A, false, 6),
      liveness(A, true, 7),
      exited(h, 1, 143, 8, 1, 8),
    );
    expect(types(decided)).toEqual([
      'execution.provider-lost',
      'execution.provider-returned',
      'rank.exited',
      'job.launching',
    ]);
    expect(decided.at(-1)).toMatchObject({ data: { attempt: 2 } });
  });

  it('changes nothing for a stale offline (before the placement), a provider the job does not use, or twice', () => {
    const h = runningGang();
    const stale = {
      ...liveness(A, false, 10),
      at: new Date(Date.parse(T0) - 1000).toISOString(),
    } as ExecutionCommand;
    expect(play(h, stale).decided).toEqual([]);
    expect(play(h, liveness(edgeId('C'), false, 10)).decided).toEqual([]);
    expect(play(h, liveness(A, true, 10)).decided).toEqual([]);
    const once = play(h, liveness(A, false, 10)).history;
    expect(play(once, liveness(A, false, 12)).decided).toEqual([]);
  });
});

describe('the progress timeout: a rank its edge stopped as hung', () => {
  it('is RANK_HUNG, no provider fault, and the gang restarts per its policy', () => {
    const spec = specOf({ strategy: 'restart_all', maxRestarts: 1, progressTimeout: '30s' });
    const h = launched(spec);
    const { decided } = play(
      h,
      running(h, 0),
      running(h, 1),
      status(
        h,
        0,
        {
          state: 'exited',
          exitCode: null,
          signal: 'SIGTERM',
          stopReason: 'no-progress',
          wallSeconds: 40,
          exitedAt: at(41).toISOString(),
        },
        41,
      ),
    );
    expect(types(decided)).not.toContain('execution.fault-recorded');
    expect(decided.find((e) => e.type === 'job.restarting')).toMatchObject({
      data: {
        attempt: 2,
        reason: {
          code: 'RANK_HUNG',
          message: expect.stringMatching(
            /^rank 0 on .* printed nothing for 30 s \(failure_recovery\.progress_timeout\): stopped as hung$/,
          ),
        },
      },
    });
  });

  it('with stay_down fails the job RANK_HUNG', () => {
    const spec = specOf({ strategy: 'stay_down', progressTimeout: '30s' });
    const h = launched(spec);
    const end = play(
      h,
      running(h, 0),
      running(h, 1),
      status(
        h,
        1,
        {
          state: 'exited',
          exitCode: 143,
          signal: null,
          stopReason: 'no-progress',
          wallSeconds: 40,
          exitedAt: at(41).toISOString(),
        },
        41,
      ),
      exited(h, 0, 143, 42, 1, 42),
    );
    expect(end.decided.find((e) => e.type === 'job.failed')).toMatchObject({
      data: { reason: { code: 'RANK_HUNG' }, faults: [] },
    });
  });
});

describe("settlement's escrow.exhausted: the job is stopped", () => {
  const exhausted = (s: number, jobId = JOB): ExecutionCommand => ({
    type: 'StopForEscrow',
    jobId,
    unbilledGpuSeconds: 12,
    now: at(s),
  });

  it('a running job stops and fails ESCROW_EXHAUSTED once its ranks exited', () => {
    let h = launched();
    h = play(h, running(h, 0), running(h, 1)).history;
    const first = play(h, exhausted(10));
    expect(first.decided).toMatchObject([
      {
        type: 'execution.stop-ordered',
        data: {
          outcome: {
            kind: 'failed',
            code: 'ESCROW_EXHAUSTED',
            message: 'the job used more than its escrow covers (12 GPU-seconds unpaid): stopped',
          },
        },
      },
    ]);
    const end = play(first.history, exited(h, 0, 143, 10, 1, 11), exited(h, 1, 143, 10, 1, 11));
    expect(end.decided.at(-1)).toMatchObject({
      type: 'job.failed',
      data: { reason: { code: 'ESCROW_EXHAUSTED' } },
    });
  });

  it('a restart under way becomes the end; a failure already decided stands', () => {
    let h = launched();
    h = play(h, running(h, 0), running(h, 1), exited(h, 0, 1, 5, 1, 5)).history;
    const { decided } = play(h, exhausted(6), exited(h, 1, 143, 6, 1, 6));
    expect(types(decided)).not.toContain('job.launching');
    expect(decided.at(-1)).toMatchObject({
      type: 'job.failed',
      data: { reason: { code: 'ESCROW_EXHAUSTED' } },
    });

    const stayDown = launched(specOf({ strategy: 'stay_down' }));
    const failing = play(
      stayDown,
      running(stayDown, 0),
      running(stayDown, 1),
      exited(stayDown, 0, 1, 5, 1, 5),
    ).history;
    expect(play(failing, exhausted(6)).decided).toEqual([]);
  });

  it('changes nothing for another job, a job not launched, or an ended one', () => {
    const h = launched();
    expect(play(h, exhausted(3, 'job-other')).decided).toEqual([]);
    expect(play([submitted(), placed], exhausted(3)).decided).toEqual([]);
    const done = play(
      h,
      running(h, 0),
      running(h, 1),
      exited(h, 0, 0, 3, 1, 3),
      exited(h, 1, 0, 3, 1, 3),
    ).history;
    expect(play(done, exhausted(4)).decided).toEqual([]);
  });
});
