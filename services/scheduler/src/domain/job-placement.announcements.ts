import {
  type Decider,
  JobPlaced,
  JobQueued,
  JobUnschedulable,
  type PayloadOf,
  type TypeOf,
} from '@gpunet/contracts';
import {
  type JobPlacementCommand,
  type JobPlacementEvent,
  jobPlacementDecider,
  type JobPlacementOptions,
  type JobPlacementState,
} from './job-placement.decider';
import type { PlacementOutcome } from './placement-explanation';

/*
 * What the rest of gpunet hears of a job's placement. The placement decider's events are the
 * scheduler's own record (kept, private, in the job's stream); three of them are also announced on
 * the SCHEDULER stream: a job queued or parked (`job.queued`), placed (`job.placed`), declared
 * unschedulable (`job.unschedulable`). The announcements are decided with the events, in the same
 * decision, so that a job's record and what was said of it never disagree.
 */

/** The job as its announcements name it. */
export interface AnnouncedJob {
  readonly jobId: string;
  readonly tenantId: string;
  /** The asset the job pays in, which `job.placed` carries. */
  readonly asset: string;
}

type Announcement<D> = { readonly type: TypeOf<D>; readonly data: PayloadOf<D> };

export type JobPlacementAnnouncement =
  Announcement<typeof JobQueued> | Announcement<typeof JobPlaced> | Announcement<typeof JobUnschedulable>;

/** What one decision on a job's stream appends: the decider's events and their announcements. */
export type JobPlacementRecord = JobPlacementEvent | JobPlacementAnnouncement;

/** A placement command, with the job that its announcements name. */
export interface CommandForJob {
  readonly job: AnnouncedJob;
  readonly command: JobPlacementCommand;
  /** For a round's start: why these nodes (the projection keeps it; the decider does not read it). */
  readonly explanation?: PlacementOutcome;
}

const ANNOUNCED: ReadonlySet<string> = new Set([JobQueued.type, JobPlaced.type, JobUnschedulable.type]);

export const isAnnouncement = (record: JobPlacementRecord): record is JobPlacementAnnouncement =>
  ANNOUNCED.has(record.type);

/**
 * The announcements of one decider event, given the state it led to. Texts are cut to the
 * contract's bounds: a sentence naming many allocations or GPUs is cut, not lost (and never fails
 * the decision it belongs to).
 */
export const announcementsOf = (
  job: AnnouncedJob,
  event: JobPlacementEvent,
  after: JobPlacementState,
): JobPlacementAnnouncement[] => {
  const { jobId, tenantId } = job;
  switch (event.type) {
    case 'Queued':
      return [
        {
          type: JobQueued.type,
          data: {
            jobId,
            tenantId,
            attempt: event.data.attempt,
            reason: event.data.reason?.slice(0, 1024) ?? null,
            at: event.data.at,
          },
        },
      ];
    case 'ParkedForCapacity':
      return [
        {
          type: JobQueued.type,
          data: {
            jobId,
            tenantId,
            attempt: Math.max(1, after.attempt),
            reason: event.data.message.slice(0, 1024),
            at: event.data.at,
          },
        },
      ];
    case 'Placed': {
      const round = after.round;
      if (!round) return [];
      return [
        {
          type: JobPlaced.type,
          data: {
            jobId,
            tenantId,
            asset: job.asset,
            allocations: [...round.allocations],
            holdUntil: round.holdUntil,
            attempt: after.attempt,
            at: event.data.at,
            ...(round.auction === null ? {} : { auction: round.auction }),
          },
        },
      ];
    }
    case 'DeclaredUnschedulable':
      return [
        {
          type: JobUnschedulable.type,
          data: {
            jobId,
            tenantId,
            code: event.data.code,
            allocation: event.data.allocation?.slice(0, 128) ?? null,
            message: event.data.message.slice(0, 2048),
            reasons: event.data.reasons.slice(0, 64).map((r) => ({
              ...r,
              plugin: r.plugin.slice(0, 128),
              reason: r.reason.slice(0, 128),
              message: r.message.slice(0, 1024),
            })),
            at: event.data.at,
          },
        },
      ];
    case 'RoundStarted':
    case 'ReservationAccepted':
    case 'ReservationDeclined':
    case 'RoundAborted':
    case 'WaitExpired':
    case 'Cancelled':
    case 'LateReservationReleased':
      return [];
  }
};

/**
 * The placement decider as one job's stream keeps it: each decided event followed by its
 * announcements. Announcements change no state; folding the stream folds the decider's events.
 */
export const announcingJobPlacementDecider = (
  options: JobPlacementOptions = {},
): Decider<CommandForJob, JobPlacementRecord, JobPlacementState> => {
  const placement = jobPlacementDecider(options);
  return {
    initialState: placement.initialState,
    decide: ({ job, command }, state) => {
      const records: JobPlacementRecord[] = [];
      let after = state;
      for (const event of placement.decide(command, state)) {
        after = placement.evolve(after, event);
        records.push(event, ...announcementsOf(job, event, after));
      }
      return records;
    },
    evolve: (state, record) => (isAnnouncement(record) ? state : placement.evolve(state, record)),
  };
};
