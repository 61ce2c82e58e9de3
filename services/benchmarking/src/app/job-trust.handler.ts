import {
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobFunded,
  JobPlaced,
  type PayloadOf,
} from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { applyJobEnded, applyJobFunded, applyJobPlaced } from '../infra/challenges.repository';

/** The durable consumers of the job events spot checks follow (one per stream). */
export const JOB_FUNDING_CONSUMER = 'benchmarking-job-funding';
export const JOB_PLACEMENTS_CONSUMER = 'benchmarking-job-placements';
export const JOB_ENDS_CONSUMER = 'benchmarking-job-ends';

/** What benchmarking reads of other services' jobs to spot-check the GPUs they run on. */
export const jobTrustMessages = [JobFunded, JobPlaced, JobCompleted, JobFailed, JobCancelled] as const;

/**
 * The running jobs whose GPUs are spot-checked: a funded job's rate (settlement's `job.funded`,
 * `terms.trust.spotChecksPerGpuHour`), a placed job's GPUs per provider (the scheduler's
 * `job.placed`) and its end (execution's completed, failed or cancelled). Each arrives on its own
 * stream, in any order; a message off contract is dead-lettered by the transport before it gets here.
 */
@Controller()
export class JobTrustHandler {
  @EventPattern(JobFunded, durable(JOB_FUNDING_CONSUMER))
  funded(@Payload() job: PayloadOf<typeof JobFunded>, @Ctx() ctx: EventContext) {
    return applyJobFunded(ctx.tx, job);
  }

  @EventPattern(JobPlaced, durable(JOB_PLACEMENTS_CONSUMER))
  placed(@Payload() job: PayloadOf<typeof JobPlaced>, @Ctx() ctx: EventContext) {
    return applyJobPlaced(ctx.tx, job);
  }

  @EventPattern([JobCompleted, JobFailed, JobCancelled], durable(JOB_ENDS_CONSUMER))
  ended(@Payload() job: { readonly jobId: string }, @Ctx() ctx: EventContext) {
    return applyJobEnded(ctx.tx, job.jobId);
  }
}
