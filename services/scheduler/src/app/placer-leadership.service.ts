import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import type { OpenJobsRepository } from '../infra/open-jobs.repository';
import { PostgresPlacerLease } from '../infra/placer-lease';
import type { PlacementEngine } from './placement.engine';
import type { SchedulerOptions } from './scheduler.options';
import { OPEN_JOBS, PLACEMENT_ENGINE, SCHEDULER_OPTIONS } from './scheduler.tokens';

/**
 * One active placer per scheduler schema: the replica holding the placer lease queues the jobs
 * still owed a decision, places, and consumes; the others stand by (their consumers stopped) and
 * try again every `leaseRetryMs`. A standby takes over when the leader's lease connection (hence its
 * lock) goes; a leader that loses its lease stops placing and consuming at once, and rejoins as a
 * standby only when restarted (its memory of the queue is no longer the truth).
 */
@Injectable()
export class PlacerLeadership {
  private readonly lease: PostgresPlacerLease;
  private leading = false;
  private deposed = false;
  private stopped = false;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(PLACEMENT_ENGINE) private readonly engine: PlacementEngine,
    @Inject(OPEN_JOBS) private readonly openJobs: OpenJobsRepository,
    @Inject(SCHEDULER_OPTIONS) private readonly options: SchedulerOptions,
  ) {
    this.lease = new PostgresPlacerLease({
      databaseUrl: options.config.databaseUrl,
      schema: options.config.schema,
      onLost: (error) => this.lost(error),
    });
    engine.setActive(false);
  }

  /** Before the consumers exist: a leader resumes its jobs, then consumes. */
  onApplicationBootstrap(): Promise<void> {
    return this.tryToLead();
  }

  /** Whether this replica holds the placer lease. */
  isLeading(): boolean {
    return this.leading;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.leading) await this.eventing.stopConsuming();
    await this.engine.close();
    this.leading = false;
    await this.lease.release();
  }

  private async tryToLead(): Promise<void> {
    if (this.stopped || this.leading || this.deposed) return;
    try {
      if (await this.lease.tryAcquire()) {
        // Jobs funded before (a restart, or the previous leader) that got no decision yet, in the
        // order they were funded. Only those whose spec is known too; the others wait for theirs.
        for (const job of await this.openJobs.owed())
          await this.engine.submit(job.funded, job.spec, {
            ...(job.queuedSince ? { queuedSince: job.queuedSince } : {}),
            ...(job.fundedBy ? { cause: job.fundedBy } : {}),
          });
        this.leading = true;
        this.engine.setActive(true);
        await this.eventing.startConsuming();
        return;
      }
    } catch (error) {
      this.options.onError(error, 'scheduler placer lease');
    }
    if (!this.stopped)
      this.options.clock.setTimeout(() => void this.tryToLead(), this.options.config.leaseRetryMs ?? 5_000);
  }

  private lost(error: unknown): void {
    this.options.onError(error, 'scheduler placer lease lost');
    if (!this.leading) return; // a standby's connection: its next try opens another
    this.leading = false;
    this.deposed = true;
    this.engine.setActive(false);
    this.eventing
      .stopConsuming()
      .catch((failure: unknown) => this.options.onError(failure, 'scheduler consumers stopping'));
  }
}
