import { causedBy, type Causation, streamIdOf } from '@gpunet/contracts';
import { type CommandHandler, EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import {
  announcingJobPlacementDecider,
  type AnnouncedJob,
  type CommandForJob,
  isAnnouncement,
  type JobPlacementRecord,
} from '../domain/job-placement.announcements';
import type { JobPlacementState, JobStatus } from '../domain/job-placement.decider';
import { explanationWrite, type PlacementOutcome } from '../domain/placement-explanation';
import type { OpenJobsRepository } from '../infra/open-jobs.repository';
import type { PlacementExplanationsRepository } from '../infra/placement-explanations.repository';
import type { DecidedPlacement, JobPlacements, PlacementCommandInput } from './placement.engine';
import type { SchedulerOptions } from './scheduler.options';
import { OPEN_JOBS, PLACEMENT_EXPLANATIONS, SCHEDULER_OPTIONS } from './scheduler.tokens';

/** A job in one of these is no longer owed a decision. */
const DECIDED: ReadonlySet<JobStatus> = new Set(['placed', 'unschedulable', 'cancelled']);

/**
 * The job placement aggregate on the scheduler's event store: every decision on a job's stream
 * (`job-<id>`) through the command handler — the decider's events stored as private events (a job's
 * placement history survives restarts and failovers), its announcements (`job.queued`,
 * `job.placed`, `job.unschedulable`) published through the outbox, `open_jobs` forgetting a
 * decided job, and the job's placement explanation (a read model), all in one transaction.
 */
@Injectable()
export class JobPlacementCommands implements JobPlacements {
  private readonly handler: CommandHandler<CommandForJob, JobPlacementRecord, JobPlacementState>;

  constructor(
    @Inject(EVENTING) eventing: EventingRuntime,
    @Inject(OPEN_JOBS) openJobs: OpenJobsRepository,
    @Inject(PLACEMENT_EXPLANATIONS) explanations: PlacementExplanationsRepository,
    @Inject(SCHEDULER_OPTIONS) options: SchedulerOptions,
  ) {
    this.handler = eventing.commandHandler({
      decider: announcingJobPlacementDecider({ maxAttempts: options.config.maxAttempts }),
      publishes: isAnnouncement,
      // A round's answers arrive one decision each: from a snapshot, none reads the whole stream.
      snapshots: { format: 1 },
      // A decided job is no longer owed a decision, in the same commit: a restart never places it again.
      effects: async ({ tx, command, events, before, after }) => {
        if (after.status !== before.status && DECIDED.has(after.status))
          await openJobs.forget(tx, command.job.jobId);
        const decided = events.filter((e) => !isAnnouncement(e));
        const write = explanationWrite(command.command, decided, before, after, command.explanation);
        if (write !== null) await explanations.write(tx, command.job.jobId, write);
      },
    });
  }

  async decide(
    job: AnnouncedJob,
    command: PlacementCommandInput,
    cause?: Causation,
    explanation?: PlacementOutcome,
  ): Promise<DecidedPlacement> {
    const handled = await this.handler.handle(
      streamIdOf('job', job.jobId),
      (state) => {
        const decided = typeof command === 'function' ? command(state) : command;
        if (decided === null) return null;
        return explanation === undefined ? { job, command: decided } : { job, command: decided, explanation };
      },
      cause,
    );
    return {
      state: handled.state,
      events: handled.domainEvents.flatMap((event, i) =>
        isAnnouncement(event) ? [] : [{ event, cause: causedBy(handled.events[i]!) }],
      ),
    };
  }
}
