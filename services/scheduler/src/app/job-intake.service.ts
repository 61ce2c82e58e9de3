import type { Causation } from '@gpunet/contracts';
import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import type { Tx } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import type { FundedJob } from '../domain/placement-input';
import type { OpenJobsRepository } from '../infra/open-jobs.repository';
import type { PlacementEngine } from './placement.engine';
import type { SchedulerOptions } from './scheduler.options';
import { OPEN_JOBS, PLACEMENT_ENGINE, SCHEDULER_OPTIONS } from './scheduler.tokens';

/**
 * Jobs into the engine, in the consumers' transactions. A job is placed once it is funded and its
 * spec is known, in either order: each message records its half (and takes the job's lock, so that
 * the second to commit sees the first), and the second hands the job to the engine after its
 * commit. A cancelled job is no longer owed a decision, and the engine releases what it holds.
 */
@Injectable()
export class JobIntake {
  constructor(
    @Inject(OPEN_JOBS) private readonly openJobs: OpenJobsRepository,
    @Inject(PLACEMENT_ENGINE) private readonly engine: PlacementEngine,
    @Inject(SCHEDULER_OPTIONS) private readonly options: SchedulerOptions,
  ) {}

  /** `job.funded` (`cause`: its causation): owed a decision from now on. */
  async funded(job: FundedJob, cause: Causation, tx: Tx): Promise<void> {
    await this.openJobs.lock(tx, job.jobId);
    await this.openJobs.recordFunded(tx, job, this.options.clock.now(), cause);
    const known = await this.openJobs.specOf(tx, job.jobId);
    if (known) tx.onCommit(() => void this.engine.submit(job, known.spec, { cause }));
  }

  /**
   * `job.submitted` (v1 arrives upcast, spec null: placed from its terms). When the funding came
   * first, the job's chain is the funding's, caused by this submission.
   */
  async submitted(jobId: string, spec: NormalizedSpec | null, cause: Causation, tx: Tx): Promise<void> {
    await this.openJobs.lock(tx, jobId);
    await this.openJobs.recordSpec(tx, jobId, spec);
    const open = await this.openJobs.openJob(tx, jobId);
    if (!open) return;
    const chain = open.fundedBy ? { ...cause, correlationId: open.fundedBy.correlationId } : cause;
    tx.onCommit(
      () =>
        void this.engine.submit(open.funded, spec, {
          ...(open.queuedSince ? { queuedSince: open.queuedSince } : {}),
          cause: chain,
        }),
    );
  }

  /** `job.cancelled`: owed no decision; what the job holds is released. */
  async cancelled(jobId: string, cause: Causation, tx: Tx): Promise<void> {
    await this.openJobs.forget(tx, jobId);
    tx.onCommit(() => void this.engine.cancel(jobId, cause));
  }
}
