import type {
  Decider,
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobLaunching,
  JobPlaced,
  JobRestarting,
  JobRunning,
  LaunchedRank,
  PayloadOf,
  RankExited,
  RankStartReply,
  RankStatusReported,
  UsageDisputed,
  UsageReported,
} from '@gpunet/contracts';
import type { FailureRecovery, NormalizedSpec } from '@gpunet/ensemble-spec';
import type { LaunchProblem, RankLayout } from './launch-spec';
import {
  disputeOf,
  type FaultRecord,
  faultsOf,
  meterKey,
  type Observations,
  observe,
  paidMeter,
  totalGpuSeconds,
  type UsageTolerance,
  usageOf,
  type WallMeter,
} from './usage';

/*
 * The job aggregate of execution: a process manager's memory, event-sourced. Its inputs (the
 * submission, the placement, cancel requests, rank statuses, start replies, the passing of time)
 * arrive as commands; its decisions are events — the public ones of the contracts (`job.launching`
 * … `job.completed`) and private facts (`execution.*`) that only this aggregate reads. Every
 * deadline (start barrier, run limit, stop wait, heartbeat, usage period) is a timestamp inside an
 * event, so a restarted service derives them from history and nothing depends on in-memory timers.
 */

/** Timing of the process manager; every value in milliseconds. */

/** A rank ended by a signal: reported as one, or as a container's exit code 128 + signal. */
const killedByHost = (status: {
  readonly exitCode: number | null;
  readonly signal: string | null;
}): boolean =>
  status.signal !== null ||
  (status.exitCode !== null && status.exitCode > 128 && status.exitCode <= 128 + 64);

export interface ExecutionPolicy {
  /** How long every rank of an attempt has to start (the gang start barrier). */
  readonly barrierMs: number;
  /** A running rank without a status for this long is lost (its host or edge died). */
  readonly heartbeatTimeoutMs: number;
  /** Period of `usage.reported` while the job runs. */
  readonly usageReportMs: number;
  /** How long to wait for stopped ranks to report their exit before deciding without them. */
  readonly stopWaitMs: number;
  /**
   * How far an edge's wall seconds for a rank may exceed what execution observed before the claim
   * is disputed (the larger of both). Default 5 s and 5 %.
   */
  readonly usageTolerance?: UsageTolerance;
}

export type StopOutcome =
  | { readonly kind: 'restart' }
  | { readonly kind: 'cancelled'; readonly reason: string | null }
  | { readonly kind: 'failed'; readonly code: string; readonly message: string };

export interface Submission {
  readonly jobId: string;
  readonly tenantId: string;
  readonly gpuClasses: readonly string[];
  readonly spec: NormalizedSpec | null;
}

type Placement = PayloadOf<typeof JobPlaced>;
type RankStatus = PayloadOf<typeof RankStatusReported>;

/**
 * The private event that starts the stream's history over: the job's state as the service's first
 * storage layout held it (`job_events` and the snapshot in `jobs`), appended once by the migration
 * that moved every job into its stream (infra/execution.migrations.ts).
 */
export const STATE_CARRIED_OVER = 'execution.state-carried-over';

/** The aggregate's events: the contracts' (published) and its private facts (kept, not published). */
export type ExecutionEvent =
  | { readonly type: 'execution.job-accepted'; readonly data: Submission }
  | { readonly type: 'execution.job-placed'; readonly data: Placement }
  | {
      readonly type: 'execution.rank-started';
      readonly data: { jobId: string; attempt: number; rank: number; startedAt: string; at: string };
    }
  | {
      readonly type: 'execution.rank-seen';
      readonly data: { jobId: string; attempt: number; rank: number; wallSeconds: number; at: string };
    }
  | {
      readonly type: 'execution.stop-ordered';
      readonly data: { jobId: string; attempt: number; outcome: StopOutcome; stopUntil: string; at: string };
    }
  | { readonly type: 'execution.released'; readonly data: { jobId: string; at: string } }
  /** Discovery declared a provider of the gang offline (no heartbeat for its liveness window). */
  | {
      readonly type: 'execution.provider-lost';
      readonly data: { jobId: string; providerId: string; lastSeenAt: string | null; at: string };
    }
  /** A lost provider is online again: a restart may run on it. */
  | {
      readonly type: 'execution.provider-returned';
      readonly data: { jobId: string; providerId: string; at: string };
    }
  /** A provider's fault, with the evidence; the job's end reports it (one per provider and kind). */
  | {
      readonly type: 'execution.fault-recorded';
      readonly data: FaultRecord & { jobId: string; attempt: number; at: string };
    }
  /** The state an earlier storage layout held for the job, carried into its stream once. */
  | { readonly type: typeof STATE_CARRIED_OVER; readonly data: { state: ExecutionState } }
  | { readonly type: 'job.launching'; readonly data: PayloadOf<typeof JobLaunching> }
  | { readonly type: 'job.running'; readonly data: PayloadOf<typeof JobRunning> }
  | { readonly type: 'rank.exited'; readonly data: PayloadOf<typeof RankExited> }
  | { readonly type: 'job.restarting'; readonly data: PayloadOf<typeof JobRestarting> }
  | { readonly type: 'usage.reported'; readonly data: PayloadOf<typeof UsageReported> }
  | { readonly type: 'usage.disputed'; readonly data: PayloadOf<typeof UsageDisputed> }
  | { readonly type: 'job.completed'; readonly data: PayloadOf<typeof JobCompleted> }
  | { readonly type: 'job.failed'; readonly data: PayloadOf<typeof JobFailed> }
  | { readonly type: 'job.cancelled'; readonly data: PayloadOf<typeof JobCancelled> };

/** Event types other services consume; the rest stay in execution's own log. */
export const PUBLIC_EVENT_TYPES: ReadonlySet<string> = new Set([
  'job.launching',
  'job.running',
  'rank.exited',
  'job.restarting',
  'usage.reported',
  'usage.disputed',
  'job.completed',
  'job.failed',
  'job.cancelled',
]);

export type ExecutionCommand =
  | { readonly type: 'AcceptSubmission'; readonly submission: Submission; readonly now: Date }
  | { readonly type: 'RecordPlacement'; readonly placement: Placement; readonly now: Date }
  /** The app laid the ranks out (it needs the network port for addresses); decided only when due. */
  | {
      readonly type: 'LaunchJob';
      readonly jobId: string;
      readonly layout: { ok: true; layout: RankLayout } | ({ ok: false } & LaunchProblem);
      readonly now: Date;
    }
  | {
      readonly type: 'RecordRankStatus';
      readonly edgeId: string;
      readonly status: RankStatus;
      readonly now: Date;
    }
  | {
      readonly type: 'RecordStartReply';
      readonly jobId: string;
      readonly attempt: number;
      readonly rank: number;
      readonly reply: RankStartReply;
      readonly now: Date;
    }
  | { readonly type: 'CancelJob'; readonly jobId: string; readonly reason: string | null; readonly now: Date }
  /**
   * Time passed. `listeningSince`: since when this process could have heard statuses (its start);
   * silence before that is the service's own, never a rank's, so it loses no rank.
   */
  | { readonly type: 'CheckDeadlines'; readonly now: Date; readonly listeningSince?: Date }
  /**
   * A release finished: `reservations`, the ids it released. A placement recorded while it ran (a
   * job cancelled before its placement arrived) holds reservations it did not cover: the job is not
   * released until a release that covers them finished.
   */
  | { readonly type: 'MarkReleased'; readonly reservations: readonly string[]; readonly now: Date }
  /**
   * The reservations a provider's edge holds (discovery's view of the edge's signed report):
   * `held`, the reservation ids; `reportedAt`, when the edge reported them. A report from before
   * the current attempt ran (a replayed backlog) says nothing about it.
   */
  | {
      readonly type: 'RecordReservations';
      readonly providerId: string;
      readonly held: readonly string[];
      readonly reportedAt: string;
      readonly now: Date;
    }
  /**
   * Settlement's `escrow.exhausted`: the job used more than its escrow covers, and usage past it is
   * not paid. The job is stopped (`ESCROW_EXHAUSTED`); a restart under way becomes that end.
   */
  | {
      readonly type: 'StopForEscrow';
      readonly jobId: string;
      readonly unbilledGpuSeconds: number;
      readonly now: Date;
    }
  /**
   * Discovery's liveness: a provider went offline (`lastSeenAt`, its last heartbeat) or came back.
   * A gang's ranks on an offline provider are lost at once, without waiting for the heartbeat
   * timeout; the stop does not wait for their exits, and no restart is launched onto it.
   */
  | {
      readonly type: 'RecordProviderLiveness';
      readonly providerId: string;
      readonly online: boolean;
      /** When discovery decided it (its clock). An offline from before the placement is stale. */
      readonly at: string;
      readonly lastSeenAt: string | null;
      readonly now: Date;
    };

export type Phase = 'new' | 'launching' | 'running' | 'stopping' | 'completed' | 'failed' | 'cancelled';

export interface ExitRecord {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

export interface ExecutionState {
  readonly phase: Phase;
  readonly jobId: string | null;
  readonly submission: Submission | null;
  readonly placement: Placement | null;
  /** The current attempt; 0 before the first launch. */
  readonly attempt: number;
  readonly ranks: readonly LaunchedRank[];
  readonly masterAddr: string;
  readonly masterPort: number;
  readonly barrierUntilMs: number | null;
  readonly runUntilMs: number | null;
  /** When the current attempt's gang was all running (execution's clock); null before. */
  readonly runningAtMs: number | null;
  readonly restarts: number;
  /** Ranks of the current attempt known to have started. */
  readonly started: Readonly<Record<number, true>>;
  readonly exited: Readonly<Record<number, ExitRecord>>;
  /** Last time (ms) each rank of the current attempt was heard of. */
  readonly lastSeenMs: Readonly<Record<number, number>>;
  /** Wall seconds each (attempt, rank) ran as its edge signed them (the highest reading). */
  readonly meter: WallMeter;
  /** When execution, on its own clock, saw each (attempt, rank) start, last run and exit. */
  readonly observed: Observations;
  /** (attempt, rank) keys whose edge figure was disputed. */
  readonly disputed: Readonly<Record<string, true>>;
  /** Providers' faults, one per provider and kind. */
  readonly faults: readonly FaultRecord[];
  /** Providers of the job discovery declared offline and that have not come back. */
  readonly lostProviders: readonly string[];
  readonly stopping: {
    readonly attempt: number;
    readonly outcome: StopOutcome;
    readonly stopUntilMs: number;
  } | null;
  readonly usageSeq: number;
  readonly lastUsageAtMs: number | null;
  readonly lastReportedGpuSeconds: number;
  readonly released: boolean;
}

export const initialExecutionState: ExecutionState = {
  phase: 'new',
  jobId: null,
  submission: null,
  placement: null,
  attempt: 0,
  ranks: [],
  masterAddr: '',
  masterPort: 0,
  barrierUntilMs: null,
  runUntilMs: null,
  runningAtMs: null,
  restarts: 0,
  started: {},
  exited: {},
  lastSeenMs: {},
  meter: {},
  observed: {},
  disputed: {},
  faults: [],
  lostProviders: [],
  stopping: null,
  usageSeq: 0,
  lastUsageAtMs: null,
  lastReportedGpuSeconds: 0,
  released: false,
};

export const isTerminal = (phase: Phase): boolean =>
  phase === 'completed' || phase === 'failed' || phase === 'cancelled';

const isActive = (phase: Phase): boolean =>
  phase === 'launching' || phase === 'running' || phase === 'stopping';

/** Whether the job has everything to launch and has not been launched (or ended) yet. */
export const readyToLaunch = (s: ExecutionState): boolean =>
  s.phase === 'new' && s.submission !== null && s.submission.spec !== null && s.placement !== null;

/** Every reservation the job holds (to release at its end). */
export const reservationsOf = (s: ExecutionState): { providerId: string; reservationId: string }[] =>
  (s.placement?.allocations ?? []).flatMap((a) =>
    a.nodes.map((n) => ({ providerId: n.providerId, reservationId: n.reservationId })),
  );

/** Why a rank status is not taken into account, or `accepted`. */
export type StatusVerdict =
  | 'accepted'
  | 'usage-only'
  | 'not-launched'
  | 'other-job'
  | 'unknown-rank'
  | 'wrong-edge'
  | 'future-attempt'
  | 'job-ended';

export const classifyStatus = (s: ExecutionState, edgeId: string, status: RankStatus): StatusVerdict => {
  if (s.attempt === 0) return 'not-launched';
  if (status.jobId !== s.jobId) return 'other-job';
  const rank = s.ranks.find((r) => r.rank === status.rank);
  if (!rank) return 'unknown-rank';
  // Only the edge the rank was placed on speaks for it (the subject's edge id, and the payload's).
  if (rank.providerId !== edgeId || status.edgeId !== edgeId) return 'wrong-edge';
  if (status.attempt > s.attempt) return 'future-attempt';
  // An older attempt (or an ended job) may still tell how long its ranks ran — nothing else.
  // After the end the final usage is published: late readings change nothing.
  if (isTerminal(s.phase)) return 'job-ended';
  if (status.attempt < s.attempt || !isActive(s.phase)) return 'usage-only';
  return 'accepted';
};

const iso = (ms: number): string => new Date(ms).toISOString();

const recoveryOf = (s: ExecutionState, rank: LaunchedRank | undefined): FailureRecovery | null => {
  const spec = s.submission?.spec;
  if (!spec) return null;
  const name = rank?.allocation ?? s.ranks[0]?.allocation;
  return spec.allocations.find((a) => a.name === name)?.failureRecovery ?? null;
};

/** Builds the decider with its timing policy. */
export const jobExecutionDecider = (
  policy: ExecutionPolicy,
): Decider<ExecutionCommand, ExecutionEvent, ExecutionState> => {
  const evolve = (s: ExecutionState, e: ExecutionEvent): ExecutionState => {
    switch (e.type) {
      case 'execution.job-accepted':
        return { ...s, jobId: e.data.jobId, submission: e.data };
      case 'execution.job-placed':
        // A placement that arrives after the end holds reservations again: they are owed a release.
        return { ...s, jobId: e.data.jobId, placement: e.data, released: false };
      case 'execution.rank-started': {
        const observed = observe(s.observed, meterKey(e.data.attempt, e.data.rank), 'started', e.data.at);
        if (e.data.attempt !== s.attempt) return { ...s, observed };
        return {
          ...s,
          observed,
          started: { ...s.started, [e.data.rank]: true },
          lastSeenMs: { ...s.lastSeenMs, [e.data.rank]: Date.parse(e.data.at) },
        };
      }
      case 'execution.rank-seen': {
        const key = meterKey(e.data.attempt, e.data.rank);
        const meter = { ...s.meter, [key]: Math.max(s.meter[key] ?? 0, e.data.wallSeconds) };
        const observed = observe(s.observed, key, 'seen', e.data.at);
        if (e.data.attempt !== s.attempt) return { ...s, meter, observed };
        return {
          ...s,
          meter,
          observed,
          lastSeenMs: { ...s.lastSeenMs, [e.data.rank]: Date.parse(e.data.at) },
        };
      }
      case 'execution.stop-ordered':
        return {
          ...s,
          phase: 'stopping',
          stopping: {
            attempt: e.data.attempt,
            outcome: e.data.outcome,
            stopUntilMs: Date.parse(e.data.stopUntil),
          },
        };
      case 'execution.released':
        return { ...s, released: true };
      case 'execution.provider-lost':
        if (s.lostProviders.includes(e.data.providerId)) return s;
        return { ...s, lostProviders: [...s.lostProviders, e.data.providerId] };
      case 'execution.provider-returned':
        return { ...s, lostProviders: s.lostProviders.filter((p) => p !== e.data.providerId) };
      case 'execution.fault-recorded': {
        const { providerId, kind, verified, detail } = e.data;
        if (s.faults.some((f) => f.providerId === providerId && f.kind === kind)) return s;
        return { ...s, faults: [...s.faults, { providerId, kind, verified, detail }] };
      }
      case STATE_CARRIED_OVER: {
        // The earlier layout kept no observations: its readings stand as observed (paid as before).
        const carried = { ...initialExecutionState, ...e.data.state };
        const observed: Record<string, { fromMs: number; toMs: number; exited: boolean }> = {};
        for (const [key, seconds] of Object.entries(carried.meter))
          observed[key] = { fromMs: 0, toMs: seconds * 1000, exited: true };
        return { ...carried, observed: { ...observed, ...carried.observed } };
      }
      case 'job.launching':
        return {
          ...s,
          jobId: e.data.jobId,
          phase: 'launching',
          attempt: e.data.attempt,
          ranks: e.data.ranks,
          masterAddr: e.data.masterAddr,
          masterPort: e.data.masterPort,
          barrierUntilMs: Date.parse(e.data.barrierUntil),
          runningAtMs: null,
          started: {},
          exited: {},
          lastSeenMs: {},
          stopping: null,
        };
      case 'job.running':
        return {
          ...s,
          phase: 'running',
          runUntilMs: Date.parse(e.data.runUntil),
          runningAtMs: Date.parse(e.data.at),
        };
      case 'rank.exited': {
        const key = meterKey(e.data.attempt, e.data.rank);
        const meter = { ...s.meter, [key]: Math.max(s.meter[key] ?? 0, e.data.wallSeconds) };
        const observed = observe(s.observed, key, 'exited', e.data.at);
        if (e.data.attempt !== s.attempt) return { ...s, meter, observed };
        return {
          ...s,
          meter,
          observed,
          started: { ...s.started, [e.data.rank]: true },
          exited: { ...s.exited, [e.data.rank]: { exitCode: e.data.exitCode, signal: e.data.signal } },
        };
      }
      case 'job.restarting':
        return { ...s, restarts: s.restarts + 1 };
      case 'usage.disputed':
        return { ...s, disputed: { ...s.disputed, [meterKey(e.data.attempt, e.data.rank)]: true } };
      case 'usage.reported':
        return {
          ...s,
          usageSeq: e.data.seq,
          lastUsageAtMs: Date.parse(e.data.reportedAt),
          lastReportedGpuSeconds: totalGpuSeconds(e.data.providers),
        };
      case 'job.completed':
        return { ...s, jobId: e.data.jobId, phase: 'completed', stopping: null };
      case 'job.failed':
        return { ...s, jobId: e.data.jobId, phase: 'failed', stopping: null };
      case 'job.cancelled':
        return { ...s, jobId: e.data.jobId, phase: 'cancelled', stopping: null };
      default: {
        const never: never = e;
        throw new Error(`unknown event ${JSON.stringify(never)}`);
      }
    }
  };

  const decide = (command: ExecutionCommand, state: ExecutionState): readonly ExecutionEvent[] => {
    const out: ExecutionEvent[] = [];
    let s = state;
    const emit = (e: ExecutionEvent): void => {
      out.push(e);
      s = evolve(s, e);
    };
    const jobId = (): string => s.jobId ?? '';
    /**
     * What is paid: per rank, the lower of the edge's signed figure and execution's observation; at
     * an auction job's clearing price, agreed at placement.
     */
    const usage = () =>
      usageOf(
        s.ranks,
        s.attempt,
        paidMeter(s.meter, s.observed),
        s.placement?.auction?.clearingPricePerGpuHour,
      );

    /** Disputes every rank whose edge claims more than observed (`all`: or only the exited ones). */
    const dispute = (now: Date, all: boolean): void => {
      for (const key of Object.keys(s.meter).sort()) {
        if (s.disputed[key] || !(all || s.observed[key]?.exited)) continue;
        const [attempt, rank] = key.split(':').map(Number) as [number, number];
        const providerId = s.ranks.find((r) => r.rank === rank)?.providerId;
        const found = disputeOf(s.meter[key] ?? 0, s.observed[key], policy.usageTolerance);
        if (found && providerId)
          emit({
            type: 'usage.disputed',
            data: { jobId: jobId(), providerId, attempt, rank, ...found, at: now.toISOString() },
          });
      }
    };

    /** The job's end: last disputes, then its final usage and faults. */
    const ending = (now: Date) => {
      dispute(now, true);
      const final = usage();
      return { usage: final, faults: faultsOf(s.faults, final) };
    };

    const recordFault = (
      providerId: string,
      kind: FaultRecord['kind'],
      verified: boolean,
      detail: string,
      now: Date,
    ): void => {
      if (s.faults.some((f) => f.providerId === providerId && f.kind === kind)) return;
      emit({
        type: 'execution.fault-recorded',
        data: {
          jobId: jobId(),
          attempt: s.attempt,
          providerId,
          kind,
          verified,
          detail,
          at: now.toISOString(),
        },
      });
    };

    const fail = (code: string, message: string, now: Date): void =>
      emit({
        type: 'job.failed',
        data: {
          jobId: jobId(),
          reason: { code, message },
          ...ending(now),
          failedAt: now.toISOString(),
        },
      });

    /** A rank whose provider discovery declared offline: it will report nothing more. */
    const onLostProvider = (rank: number): boolean => {
      const providerId = s.ranks.find((r) => r.rank === rank)?.providerId;
      return providerId !== undefined && s.lostProviders.includes(providerId);
    };
    /** Why the gang cannot be launched again on its placement, or null. */
    const lostInGang = (): string | null => {
      const lost = [...new Set(s.ranks.map((r) => r.providerId))].filter((p) => s.lostProviders.includes(p));
      return lost.length === 0
        ? null
        : `the gang cannot restart without ${lost.join(', ')}, offline (replace_failed_node is not supported yet)`;
    };

    const allStartedExited = (): boolean =>
      Object.keys(s.started).every(
        (rank) => s.exited[Number(rank)] !== undefined || onLostProvider(Number(rank)),
      );

    const finish = (now: Date): void => {
      const stopping = s.stopping;
      if (!stopping) return;
      const gone = stopping.outcome.kind === 'restart' ? lostInGang() : null;
      const outcome: StopOutcome =
        gone === null ? stopping.outcome : { kind: 'failed', code: 'RANK_LOST', message: gone };
      switch (outcome.kind) {
        case 'restart':
          emit({
            type: 'job.launching',
            data: {
              jobId: jobId(),
              tenantId: s.placement?.tenantId ?? s.submission?.tenantId ?? jobId(),
              attempt: stopping.attempt + 1,
              worldSize: s.ranks.length,
              masterAddr: s.masterAddr,
              masterPort: s.masterPort,
              ranks: [...s.ranks],
              barrierUntil: iso(now.getTime() + policy.barrierMs),
              at: now.toISOString(),
            },
          });
          return;
        case 'cancelled':
          emit({
            type: 'job.cancelled',
            data: { jobId: jobId(), usage: ending(now).usage, cancelledAt: now.toISOString() },
          });
          return;
        case 'failed':
          fail(outcome.code, outcome.message, now);
          return;
        default: {
          const never: never = outcome;
          throw new Error(`unknown outcome ${JSON.stringify(never)}`);
        }
      }
    };

    /** Stops the attempt's ranks; decides at once when none of them runs. */
    const stop = (outcome: StopOutcome, now: Date): void => {
      emit({
        type: 'execution.stop-ordered',
        data: {
          jobId: jobId(),
          attempt: s.attempt,
          outcome,
          stopUntil: iso(now.getTime() + policy.stopWaitMs),
          at: now.toISOString(),
        },
      });
      if (allStartedExited()) finish(now);
    };

    /**
     * While the gang stops: a restart under way becomes `outcome` (the same stop, the same wait); a
     * failure or cancel already decided stands. Decides at once when nothing runs any more.
     */
    const endInsteadOfRestart = (outcome: StopOutcome, now: Date): void => {
      const stopping = s.stopping;
      if (stopping?.outcome.kind === 'restart')
        emit({
          type: 'execution.stop-ordered',
          data: {
            jobId: jobId(),
            attempt: stopping.attempt,
            outcome,
            stopUntil: iso(stopping.stopUntilMs),
            at: now.toISOString(),
          },
        });
      if (allStartedExited()) finish(now);
    };

    /** A rank failed or was lost: the spec's recovery policy decides. */
    const gangFailed = (rank: LaunchedRank | undefined, code: string, message: string, now: Date): void => {
      const recovery = recoveryOf(s, rank);
      const gone = lostInGang();
      if (gone !== null && recovery && recovery.strategy !== 'stay_down') {
        stop({ kind: 'failed', code, message: `${message}; ${gone}` }, now);
        return;
      }
      // restart_failed restarts the whole gang too: a collective cannot take one rank back alone.
      if (recovery && recovery.strategy !== 'stay_down' && s.restarts < recovery.maxRestarts) {
        emit({
          type: 'job.restarting',
          data: { jobId: jobId(), attempt: s.attempt + 1, reason: { code, message }, at: now.toISOString() },
        });
        stop({ kind: 'restart' }, now);
        return;
      }
      const exhausted =
        recovery && recovery.strategy !== 'stay_down' ? ` after ${s.restarts} restart(s)` : '';
      stop({ kind: 'failed', code, message: `${message}${exhausted}` }, now);
    };

    const markStarted = (rank: number, startedAt: string, now: Date): void => {
      if (s.started[rank] || s.exited[rank]) return;
      emit({
        type: 'execution.rank-started',
        data: { jobId: jobId(), attempt: s.attempt, rank, startedAt, at: now.toISOString() },
      });
      if (s.phase === 'launching' && s.ranks.every((r) => s.started[r.rank])) {
        const maxDurationMs = s.submission?.spec?.maxDurationMs ?? 0;
        // The run limit counts from the first time the gang ran: restarts never extend it.
        const runUntil = s.runUntilMs ?? now.getTime() + maxDurationMs;
        emit({
          type: 'job.running',
          data: { jobId: jobId(), attempt: s.attempt, runUntil: iso(runUntil), at: now.toISOString() },
        });
      }
    };

    /** After the submission or the placement arrived: a job without a spec cannot run. */
    const checkSpec = (now: Date): void => {
      if (s.phase === 'new' && s.submission !== null && s.submission.spec === null && s.placement !== null)
        fail('SPEC_MISSING', 'the job was submitted without a spec (job.submitted v1): nothing to run', now);
    };

    switch (command.type) {
      case 'AcceptSubmission':
        if (s.submission !== null) return [];
        emit({ type: 'execution.job-accepted', data: command.submission });
        checkSpec(command.now);
        return out;
      case 'RecordPlacement':
        // A placement after the end (cancelled before placement) is still recorded: its
        // reservations are released like every other.
        if (s.placement !== null) return [];
        emit({ type: 'execution.job-placed', data: command.placement });
        checkSpec(command.now);
        return out;
      case 'LaunchJob': {
        if (!readyToLaunch(s)) return [];
        const { layout, now } = command;
        if (!layout.ok) {
          fail(layout.code, layout.message, now);
          return out;
        }
        emit({
          type: 'job.launching',
          data: {
            jobId: jobId(),
            tenantId: s.placement!.tenantId,
            attempt: 1,
            worldSize: layout.layout.worldSize,
            masterAddr: layout.layout.masterAddr,
            masterPort: layout.layout.masterPort,
            ranks: [...layout.layout.ranks],
            barrierUntil: iso(now.getTime() + policy.barrierMs),
            at: now.toISOString(),
          },
        });
        return out;
      }
      case 'RecordRankStatus': {
        const { status, edgeId, now } = command;
        const verdict = classifyStatus(s, edgeId, status);
        const key = meterKey(status.attempt, status.rank);
        const progress = (): void => {
          emit({
            type: 'execution.rank-seen',
            data: {
              jobId: jobId(),
              attempt: status.attempt,
              rank: status.rank,
              wallSeconds: status.wallSeconds,
              at: now.toISOString(),
            },
          });
        };
        if (verdict === 'usage-only') {
          if (status.wallSeconds > (s.meter[key] ?? 0)) progress();
          return out;
        }
        if (verdict !== 'accepted') return [];
        if (s.exited[status.rank]) return [];
        if (status.state === 'running') {
          if (!s.started[status.rank]) {
            markStarted(status.rank, status.startedAt, now);
            return out;
          }
          // A heartbeat: the rank is alive, and has run this long. Recorded a few times per
          // heartbeat timeout, not every beat: enough for liveness and the usage period, and the
          // job's log stays small (the exit carries the exact reading).
          const sinceSeen = now.getTime() - (s.lastSeenMs[status.rank] ?? 0);
          if (sinceSeen >= policy.heartbeatTimeoutMs / 4) progress();
          return out;
        }
        const rank = s.ranks.find((r) => r.rank === status.rank);
        markStarted(status.rank, status.startedAt, now);
        emit({
          type: 'rank.exited',
          data: {
            jobId: jobId(),
            attempt: status.attempt,
            rank: status.rank,
            providerId: edgeId,
            exitCode: status.exitCode,
            signal: status.signal,
            wallSeconds: Math.max(status.wallSeconds, s.meter[key] ?? 0),
            at: now.toISOString(),
          },
        });
        dispute(now, false);
        if (s.phase === 'stopping') {
          if (allStartedExited()) finish(now);
          return out;
        }
        const succeeded = status.exitCode === 0 && status.signal === null;
        if (!succeeded) {
          const how = status.signal !== null ? `signal ${status.signal}` : `code ${String(status.exitCode)}`;
          // Killed, and execution did not ask it to stop: as the control plane sees it, the rank
          // died on its host (a signal, or a container's 128 + signal exit code). A plain non-zero
          // exit is the job's own code failing, not the provider's fault. Only the edge says how,
          // so the fault is not verified (never slashed).
          // A rank its edge stopped as hung (no output for the spec's progress timeout) is the
          // job's own stall, not the provider's fault.
          const hung = status.stopReason === 'no-progress';
          if (killedByHost(status) && status.stopReason !== 'max-duration' && !hung)
            recordFault(
              edgeId,
              'rank-crashed',
              false,
              `rank ${status.rank} (attempt ${status.attempt}) exited with ${how}${status.stopReason ? ` (${status.stopReason})` : ''}, reported at ${now.toISOString()}`,
              now,
            );
          if (hung) {
            const timeoutMs = recoveryOf(s, rank)?.progressTimeoutMs ?? null;
            const silent =
              timeoutMs === null ? '' : ` for ${timeoutMs / 1000} s (failure_recovery.progress_timeout)`;
            gangFailed(
              rank,
              'RANK_HUNG',
              `rank ${status.rank} on ${edgeId} printed nothing${silent}: stopped as hung`,
              now,
            );
          } else gangFailed(rank, 'RANK_FAILED', `rank ${status.rank} on ${edgeId} exited with ${how}`, now);
          return out;
        }
        const allDone = s.ranks.every(
          (r) => s.exited[r.rank]?.exitCode === 0 && s.exited[r.rank]?.signal === null,
        );
        if (allDone)
          emit({
            type: 'job.completed',
            data: { jobId: jobId(), ...ending(now), completedAt: now.toISOString() },
          });
        return out;
      }
      case 'RecordStartReply': {
        const { reply, now } = command;
        if (command.jobId !== s.jobId || command.attempt !== s.attempt) return [];
        if (s.phase !== 'launching' && s.phase !== 'running') return [];
        if (!s.ranks.some((r) => r.rank === command.rank)) return [];
        if (reply.outcome === 'started') {
          markStarted(command.rank, reply.startedAt, now);
          return out;
        }
        const reasons = reply.reasons.map((r) => `${r.code}: ${r.message}`).join('; ');
        // A refusal is the edge's policy or the spec's fault: starting again would be refused again.
        stop(
          { kind: 'failed', code: 'START_REJECTED', message: `rank ${command.rank} refused: ${reasons}` },
          now,
        );
        return out;
      }
      case 'CancelJob': {
        const { now } = command;
        if (isTerminal(s.phase)) return [];
        if (s.jobId === null) s = { ...s, jobId: command.jobId };
        if (s.phase === 'new') {
          emit({
            type: 'job.cancelled',
            data: { jobId: jobId(), usage: [], cancelledAt: now.toISOString() },
          });
          return out;
        }
        if (s.phase === 'stopping') {
          endInsteadOfRestart({ kind: 'cancelled', reason: command.reason }, now);
          return out;
        }
        stop({ kind: 'cancelled', reason: command.reason }, now);
        return out;
      }
      case 'CheckDeadlines': {
        const { now } = command;
        const t = now.getTime();
        if (!isActive(s.phase)) return [];
        // Waits the service could not have watched (it was down) start again when it listens.
        const listening = command.listeningSince?.getTime() ?? 0;
        if (
          s.phase === 'stopping' &&
          s.stopping &&
          t >= Math.max(s.stopping.stopUntilMs, listening + policy.stopWaitMs)
        ) {
          finish(now);
        } else if (s.phase !== 'stopping' && s.runUntilMs !== null && t >= s.runUntilMs) {
          const minutes = Math.round((s.submission?.spec?.maxDurationMs ?? 0) / 60_000);
          stop(
            {
              kind: 'failed',
              code: 'MAX_DURATION',
              message: `the job ran its maximum duration (${minutes} min)`,
            },
            now,
          );
        } else if (
          s.phase === 'launching' &&
          s.barrierUntilMs !== null &&
          t >= Math.max(s.barrierUntilMs, listening + policy.barrierMs)
        ) {
          const missing = s.ranks.filter((r) => !s.started[r.rank]).map((r) => r.rank);
          stop(
            {
              kind: 'failed',
              code: 'START_BARRIER',
              message: `ranks ${missing.join(', ')} did not start before the start barrier's deadline`,
            },
            now,
          );
        } else if (s.phase === 'running') {
          const lost = s.ranks.find(
            (r) =>
              s.started[r.rank] &&
              !s.exited[r.rank] &&
              t - Math.max(s.lastSeenMs[r.rank] ?? t, listening) >= policy.heartbeatTimeoutMs,
          );
          if (lost) {
            // Execution itself heard nothing: the evidence is the control plane's own, so verified.
            const lastSeen = iso(Math.max(s.lastSeenMs[lost.rank] ?? t, listening));
            recordFault(
              lost.providerId,
              'host-lost',
              true,
              `rank ${lost.rank} (attempt ${s.attempt}) last heard of at ${lastSeen}; silent for ${policy.heartbeatTimeoutMs} ms at ${now.toISOString()}`,
              now,
            );
            gangFailed(
              lost,
              'RANK_LOST',
              `rank ${lost.rank} on ${lost.providerId} sent no status for ${policy.heartbeatTimeoutMs} ms`,
              now,
            );
          }
        }
        if (isActive(s.phase) && (s.lastUsageAtMs === null || t - s.lastUsageAtMs >= policy.usageReportMs)) {
          const providers = usage();
          if (providers.length > 0 && totalGpuSeconds(providers) > s.lastReportedGpuSeconds)
            emit({
              type: 'usage.reported',
              data: { jobId: jobId(), seq: s.usageSeq + 1, providers, reportedAt: now.toISOString() },
            });
        }
        return out;
      }
      case 'MarkReleased':
        if (!isTerminal(s.phase) || s.released) return [];
        if (reservationsOf(s).some((r) => !command.reservations.includes(r.reservationId))) return [];
        emit({ type: 'execution.released', data: { jobId: jobId(), at: command.now.toISOString() } });
        return out;
      case 'RecordReservations': {
        const { providerId, held, reportedAt, now } = command;
        // Only while ranks run: between attempts a reservation may lapse without anyone at fault.
        if (s.phase !== 'running' || s.runningAtMs === null) return [];
        if (Date.parse(reportedAt) <= s.runningAtMs) return [];
        const gone = reservationsOf(s).filter(
          (r) => r.providerId === providerId && !held.includes(r.reservationId),
        );
        if (gone.length === 0) return [];
        const reservationIds = gone.map((r) => r.reservationId).join(', ');
        recordFault(
          providerId,
          'abandoned',
          true,
          `the edge no longer held reservation ${reservationIds} of the running job at ${now.toISOString()}`,
          now,
        );
        gangFailed(
          s.ranks.find((r) => r.providerId === providerId),
          'RESERVATION_ABANDONED',
          `${providerId} released reservation ${reservationIds} while the job held it`,
          now,
        );
        return out;
      }
      case 'StopForEscrow': {
        const { now } = command;
        if (command.jobId !== s.jobId || !isActive(s.phase)) return [];
        const outcome: StopOutcome = {
          kind: 'failed',
          code: 'ESCROW_EXHAUSTED',
          message: `the job used more than its escrow covers (${command.unbilledGpuSeconds} GPU-seconds unpaid): stopped`,
        };
        if (s.phase === 'stopping') {
          if (s.stopping?.outcome.kind !== 'restart') return [];
          endInsteadOfRestart(outcome, now);
          return out;
        }
        stop(outcome, now);
        return out;
      }
      case 'RecordProviderLiveness': {
        const { providerId, online, at, lastSeenAt, now } = command;
        if (!isActive(s.phase)) return [];
        // A replayed backlog: the provider was offline before this job was placed on it.
        if (!online && s.placement !== null && Date.parse(at) < Date.parse(s.placement.at)) return [];
        if (online) {
          if (!s.lostProviders.includes(providerId)) return [];
          emit({
            type: 'execution.provider-returned',
            data: { jobId: jobId(), providerId, at: now.toISOString() },
          });
          return out;
        }
        const onIt = s.ranks.filter((r) => r.providerId === providerId);
        if (onIt.length === 0 || s.lostProviders.includes(providerId)) return [];
        emit({
          type: 'execution.provider-lost',
          data: { jobId: jobId(), providerId, lastSeenAt, at: now.toISOString() },
        });
        const since = lastSeenAt === null ? 'never heard of' : `last heard of at ${lastSeenAt}`;
        // Ranks it held that had not ended: lost with it (while stopping, those yet to report).
        const held = onIt.filter((r) => !s.exited[r.rank] && (s.phase !== 'stopping' || s.started[r.rank]));
        // Discovery's liveness is the control plane's own evidence, so the fault is verified.
        if (held.length > 0)
          recordFault(
            providerId,
            'host-lost',
            true,
            `discovery declared ${providerId} offline at ${now.toISOString()} (${since}) while ranks ${held.map((r) => r.rank).join(', ')} (attempt ${s.attempt}) ran on it`,
            now,
          );
        if (s.phase === 'stopping') {
          if (allStartedExited()) finish(now);
          return out;
        }
        gangFailed(onIt[0], 'RANK_LOST', `${providerId} went offline (${since})`, now);
        return out;
      }
      default: {
        const never: never = command;
        throw new Error(`unknown command ${JSON.stringify(never)}`);
      }
    }
  };

  return { decide, evolve, initialState: initialExecutionState };
};
