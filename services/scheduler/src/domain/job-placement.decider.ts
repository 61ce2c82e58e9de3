import type { AuctionClearing, Decider, DomainEvent, PlacedAllocation } from '@gpunet/contracts';

/*
 * One job's way through the scheduler, as a pure decider (commands imperative, events past tense):
 *
 *   queued ──StartRound: RoundStarted──▶ reserving ──RecordAnswer, every one accepted: Placed──▶ placed
 *     ▲                                    │ RecordAnswer declined, or ExpireRound at the deadline:
 *     └──────────RoundAborted, Queued──────┘ decliners / non-answerers excluded, every reservation released
 *                                            (after maxAttempts rounds: DeclaredUnschedulable, RetriesExhausted)
 *   queued ──RecordScheduleFailure, not now: ParkedForCapacity──▶ waiting (until capacity changes)
 *   queued / waiting ──RecordScheduleFailure, unresolvable or an error──▶ DeclaredUnschedulable
 *   queued / waiting ──ExpireWait──▶ DeclaredUnschedulable (code Unschedulable, the last reasons); while
 *     reserving (WaitExpired) the round finishes first: placed, or unschedulable instead of requeued
 *   any but unschedulable / cancelled ──Cancel──▶ Cancelled (release everything held)
 *
 * Releases are listed in the events; the app sends `ReleaseOnEdge` for each (the edge treats an
 * unknown reservation as released, so sending twice is harmless). An answer that arrives for a
 * round already aborted is never trusted: an accept is released again (`LateReservationReleased`).
 * No clock, no ids: instants, round and reservation ids arrive inside the commands.
 */

export interface ReservationTarget {
  readonly reservationId: string;
  readonly providerId: string;
}

export type RoundAbortCause = 'declined' | 'timeout';

export interface CoreReason {
  readonly plugin: string;
  readonly reason: string;
  readonly message: string;
  readonly gpus: number | null;
}

export type JobPlacementEvent =
  | DomainEvent<
      'Queued',
      { jobId: string; tenantId: string; attempt: number; reason: string | null; at: string }
    >
  | DomainEvent<
      'RoundStarted',
      {
        roundId: string;
        attempt: number;
        allocations: readonly PlacedAllocation[];
        deadline: string;
        holdUntil: string;
        at: string;
        /**
         * Reservation id → the price per GPU-hour its edge is asked to accept (what it is paid).
         * Absent in rounds recorded before prices were (they were asked the job's max price).
         */
        prices?: RoundPrices;
        /** An auction job's clearing, announced with `job.placed`; absent or null otherwise. */
        auction?: AuctionClearing | null;
      }
    >
  | DomainEvent<'ReservationAccepted', { roundId: string; reservationId: string }>
  | DomainEvent<
      'ReservationDeclined',
      { roundId: string; reservationId: string; providerId: string; reasons: readonly string[] }
    >
  | DomainEvent<
      'RoundAborted',
      {
        roundId: string;
        cause: RoundAbortCause;
        /** Every reservation of the round: each is released, accepted or not. */
        release: readonly ReservationTarget[];
        /** Providers left out of the next rounds: decliners, or those that never answered. */
        exclude: readonly string[];
        reason: string;
        at: string;
      }
    >
  | DomainEvent<'Placed', { roundId: string; at: string }>
  | DomainEvent<
      'DeclaredUnschedulable',
      {
        code: 'UnschedulableAndUnresolvable' | 'Unschedulable' | 'Error' | 'RetriesExhausted';
        allocation: string | null;
        message: string;
        reasons: readonly CoreReason[];
        at: string;
      }
    >
  | DomainEvent<'ParkedForCapacity', { message: string; reasons: readonly CoreReason[]; at: string }>
  /** The maximum wait passed during a reservation round: the round decides, no requeue after it. */
  | DomainEvent<'WaitExpired', { at: string }>
  | DomainEvent<'Cancelled', { release: readonly ReservationTarget[]; at: string }>
  | DomainEvent<'LateReservationReleased', { roundId: string; release: ReservationTarget }>;

export type JobPlacementCommand =
  | { type: 'Queue'; jobId: string; tenantId: string; at: string }
  | {
      type: 'StartRound';
      roundId: string;
      allocations: readonly PlacedAllocation[];
      deadline: string;
      holdUntil: string;
      at: string;
      prices: RoundPrices;
      auction: AuctionClearing | null;
    }
  | {
      type: 'RecordScheduleFailure';
      code: 'UnschedulableAndUnresolvable' | 'Unschedulable' | 'Error';
      allocation: string | null;
      message: string;
      reasons: readonly CoreReason[];
      at: string;
    }
  | {
      type: 'RecordAnswer';
      roundId: string;
      reservationId: string;
      outcome: 'accepted' | 'declined';
      reasons: readonly string[];
      at: string;
    }
  | { type: 'ExpireRound'; roundId: string; at: string }
  /** The job has been queued for `maxWaitMs` without a placement. */
  | { type: 'ExpireWait'; maxWaitMs: number; at: string }
  | { type: 'Cancel'; at: string };

export type JobStatus = 'new' | 'queued' | 'waiting' | 'reserving' | 'placed' | 'unschedulable' | 'cancelled';

/** Reservation id → price per GPU-hour in minor units of the job's asset. */
export type RoundPrices = Readonly<Record<string, string>>;

export interface Round {
  readonly roundId: string;
  readonly allocations: readonly PlacedAllocation[];
  readonly deadline: string;
  readonly holdUntil: string;
  /** What each reservation was asked to accept; null for a round recorded before prices were. */
  readonly prices: RoundPrices | null;
  readonly auction: AuctionClearing | null;
  readonly targets: readonly ReservationTarget[];
  readonly accepted: readonly string[];
}

export interface JobPlacementState {
  readonly status: JobStatus;
  readonly jobId: string | null;
  readonly tenantId: string | null;
  /** Reservation rounds started so far. */
  readonly attempt: number;
  readonly round: Round | null;
  /** Rounds that ended without a placement: answers to them are late. */
  readonly abortedRounds: readonly string[];
  readonly excluded: readonly string[];
  /** Every reservation any round of this job asked for, to release late accepts. */
  readonly reservations: readonly ReservationTarget[];
  /** Why the job last failed to place (the core's sentence or a round's outcome), for max wait. */
  readonly lastReason: { readonly message: string; readonly reasons: readonly CoreReason[] } | null;
  /** The maximum wait passed while reserving: an aborted round ends the job instead of requeueing. */
  readonly waitExpired: boolean;
}

export class JobPlacementError extends Error {
  constructor(
    readonly code: 'NOT_QUEUED' | 'UNKNOWN_JOB' | 'EMPTY_PLACEMENT',
    message: string,
  ) {
    super(message);
    this.name = 'JobPlacementError';
  }
}

export const initialJobPlacementState: JobPlacementState = {
  status: 'new',
  jobId: null,
  tenantId: null,
  attempt: 0,
  round: null,
  abortedRounds: [],
  excluded: [],
  reservations: [],
  lastReason: null,
  waitExpired: false,
};

/** Every reservation of a set of allocations, one per node, in order. */
export const reservationTargets = (allocations: readonly PlacedAllocation[]): ReservationTarget[] =>
  allocations.flatMap((a) =>
    a.nodes.map((n) => ({ reservationId: n.reservationId, providerId: n.providerId })),
  );

const TERMINAL: readonly JobStatus[] = ['placed', 'unschedulable', 'cancelled'];

export interface JobPlacementOptions {
  /** Reservation rounds before the job is declared unschedulable (`RetriesExhausted`). Default 5. */
  readonly maxAttempts?: number;
}

export const jobPlacementDecider = (
  options: JobPlacementOptions = {},
): Decider<JobPlacementCommand, JobPlacementEvent, JobPlacementState> => {
  const maxAttempts = options.maxAttempts ?? 5;

  const decide = (command: JobPlacementCommand, state: JobPlacementState): JobPlacementEvent[] => {
    switch (command.type) {
      case 'Queue':
        if (state.status !== 'new') return [];
        return [
          {
            type: 'Queued',
            data: {
              jobId: command.jobId,
              tenantId: command.tenantId,
              attempt: 1,
              reason: null,
              at: command.at,
            },
          },
        ];
      case 'StartRound': {
        if (state.status !== 'queued' && state.status !== 'waiting') {
          throw new JobPlacementError(
            'NOT_QUEUED',
            `a round can start only for a queued job (${state.status})`,
          );
        }
        if (reservationTargets(command.allocations).length === 0) {
          throw new JobPlacementError('EMPTY_PLACEMENT', 'a round needs at least one reservation');
        }
        return [
          {
            type: 'RoundStarted',
            data: {
              roundId: command.roundId,
              attempt: state.attempt + 1,
              allocations: command.allocations,
              deadline: command.deadline,
              holdUntil: command.holdUntil,
              at: command.at,
              prices: command.prices,
              auction: command.auction,
            },
          },
        ];
      }
      case 'RecordScheduleFailure': {
        if (state.status !== 'queued' && state.status !== 'waiting') return [];
        if (command.code === 'Unschedulable') {
          return state.status === 'waiting'
            ? []
            : [
                {
                  type: 'ParkedForCapacity',
                  data: { message: command.message, reasons: command.reasons, at: command.at },
                },
              ];
        }
        return [
          {
            type: 'DeclaredUnschedulable',
            data: {
              code: command.code,
              allocation: command.allocation,
              message: command.message,
              reasons: command.reasons,
              at: command.at,
            },
          },
        ];
      }
      case 'RecordAnswer': {
        const round = state.round;
        if (!round || round.roundId !== command.roundId || state.status !== 'reserving') {
          // Late: the round ended (aborted, or the job was cancelled). Never keep what it accepted.
          if (command.outcome !== 'accepted' || !state.abortedRounds.includes(command.roundId)) return [];
          return [
            {
              type: 'LateReservationReleased',
              data: {
                roundId: command.roundId,
                release: {
                  reservationId: command.reservationId,
                  providerId: providerOf(state, command.reservationId),
                },
              },
            },
          ];
        }
        const target = round.targets.find((t) => t.reservationId === command.reservationId);
        if (!target || round.accepted.includes(command.reservationId)) return [];
        if (command.outcome === 'accepted') {
          const accepted: JobPlacementEvent = {
            type: 'ReservationAccepted',
            data: { roundId: round.roundId, reservationId: command.reservationId },
          };
          return round.accepted.length + 1 === round.targets.length
            ? [accepted, { type: 'Placed', data: { roundId: round.roundId, at: command.at } }]
            : [accepted];
        }
        const reason = `provider ${target.providerId} declined: ${command.reasons.join('; ') || 'no reason given'}`;
        return [
          {
            type: 'ReservationDeclined',
            data: {
              roundId: round.roundId,
              reservationId: command.reservationId,
              providerId: target.providerId,
              reasons: command.reasons,
            },
          },
          ...abort(state, round, 'declined', [target.providerId], reason, command.at),
        ];
      }
      case 'ExpireRound': {
        const round = state.round;
        if (!round || round.roundId !== command.roundId || state.status !== 'reserving') return [];
        const silent = round.targets
          .filter((t) => !round.accepted.includes(t.reservationId))
          .map((t) => t.providerId);
        const reason = `no answer before the deadline from ${silent.join(', ')}`;
        return abort(state, round, 'timeout', silent, reason, command.at);
      }
      case 'ExpireWait': {
        if (state.status === 'reserving')
          return state.waitExpired ? [] : [{ type: 'WaitExpired', data: { at: command.at } }];
        if (state.status !== 'queued' && state.status !== 'waiting') return [];
        return [
          {
            type: 'DeclaredUnschedulable',
            data: {
              code: 'Unschedulable',
              allocation: null,
              message: `queued longer than the maximum wait of ${waitInWords(command.maxWaitMs)}; last: ${state.lastReason?.message ?? 'no placement was tried'}`,
              reasons: state.lastReason?.reasons ?? [],
              at: command.at,
            },
          },
        ];
      }
      case 'Cancel': {
        if (TERMINAL.includes(state.status) && state.status !== 'placed') return [];
        if (state.status === 'new')
          throw new JobPlacementError('UNKNOWN_JOB', 'no such job in the scheduler');
        const release =
          state.round && (state.status === 'reserving' || state.status === 'placed')
            ? state.round.targets
            : [];
        return [{ type: 'Cancelled', data: { release, at: command.at } }];
      }
    }
  };

  const abort = (
    state: JobPlacementState,
    round: Round,
    cause: RoundAbortCause,
    exclude: readonly string[],
    reason: string,
    at: string,
  ): JobPlacementEvent[] => {
    const aborted: JobPlacementEvent = {
      type: 'RoundAborted',
      data: {
        roundId: round.roundId,
        cause,
        release: round.targets,
        exclude: [...new Set(exclude)],
        reason,
        at,
      },
    };
    if (state.waitExpired) {
      return [
        aborted,
        {
          type: 'DeclaredUnschedulable',
          data: {
            code: 'Unschedulable',
            allocation: null,
            message: `queued longer than the maximum wait; the last reservation round failed: ${reason}`,
            reasons: state.lastReason?.reasons ?? [],
            at,
          },
        },
      ];
    }
    if (state.attempt >= maxAttempts) {
      return [
        aborted,
        {
          type: 'DeclaredUnschedulable',
          data: {
            code: 'RetriesExhausted',
            allocation: null,
            message: `${state.attempt} reservation rounds failed; the last: ${reason}`,
            reasons: [],
            at,
          },
        },
      ];
    }
    return [
      aborted,
      {
        type: 'Queued',
        data: {
          jobId: state.jobId ?? '',
          tenantId: state.tenantId ?? '',
          attempt: state.attempt + 1,
          reason,
          at,
        },
      },
    ];
  };

  const evolve = (state: JobPlacementState, event: JobPlacementEvent): JobPlacementState => {
    switch (event.type) {
      case 'Queued':
        return { ...state, status: 'queued', jobId: event.data.jobId, tenantId: event.data.tenantId };
      case 'RoundStarted':
        return {
          ...state,
          reservations: [...state.reservations, ...reservationTargets(event.data.allocations)],
          status: 'reserving',
          attempt: event.data.attempt,
          round: {
            roundId: event.data.roundId,
            allocations: event.data.allocations,
            deadline: event.data.deadline,
            holdUntil: event.data.holdUntil,
            prices: event.data.prices ?? null,
            auction: event.data.auction ?? null,
            targets: reservationTargets(event.data.allocations),
            accepted: [],
          },
        };
      case 'ReservationAccepted':
        return state.round
          ? {
              ...state,
              round: { ...state.round, accepted: [...state.round.accepted, event.data.reservationId] },
            }
          : state;
      case 'ReservationDeclined':
        return state;
      case 'RoundAborted':
        return {
          ...state,
          status: 'queued',
          abortedRounds: [...state.abortedRounds, event.data.roundId],
          excluded: [...new Set([...state.excluded, ...event.data.exclude])],
          lastReason: { message: event.data.reason, reasons: [] },
          // The aborted round is kept so that late answers can be matched to providers.
        };
      case 'Placed':
        return { ...state, status: 'placed' };
      case 'DeclaredUnschedulable':
        return { ...state, status: 'unschedulable' };
      case 'ParkedForCapacity':
        return {
          ...state,
          status: 'waiting',
          lastReason: { message: event.data.message, reasons: event.data.reasons },
        };
      case 'WaitExpired':
        return { ...state, waitExpired: true };
      case 'Cancelled':
        return {
          ...state,
          status: 'cancelled',
          abortedRounds: state.round
            ? [...new Set([...state.abortedRounds, state.round.roundId])]
            : state.abortedRounds,
        };
      case 'LateReservationReleased':
        return state;
    }
  };

  return { decide, evolve, initialState: initialJobPlacementState };
};

/** The provider of a reservation of any round of this job. */
const providerOf = (state: JobPlacementState, reservationId: string): string =>
  state.reservations.find((t) => t.reservationId === reservationId)?.providerId ?? 'unknown';

/** `3600000` → `1 h`, `90000` → `90 s`: the wait as people read it. */
const waitInWords = (ms: number): string =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
