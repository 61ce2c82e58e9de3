import {
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobLaunching,
  OverlayPathsReported,
  type PayloadOf,
} from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { OverlayLinks } from './overlay-links.service';

/** The durable consumer of execution's job events (its inbox and checkpoint key). */
export const JOB_OVERLAYS_CONSUMER = 'benchmarking-job-overlays';
const JOB_OVERLAYS = durable(JOB_OVERLAYS_CONSUMER);

/**
 * Execution's events benchmarking learns overlay links from (stream `EXECUTION`): a launch names
 * which edge holds which overlay address, a job's path report measures its pairs, and the job's end
 * lets its hosts be forgotten.
 */
export const jobOverlayMessages = [
  JobLaunching,
  OverlayPathsReported,
  JobCompleted,
  JobFailed,
  JobCancelled,
] as const;

@Controller()
export class JobOverlaysHandler {
  constructor(@Inject(OverlayLinks) private readonly overlays: OverlayLinks) {}

  @EventPattern(JobLaunching, JOB_OVERLAYS)
  launching(@Payload() job: PayloadOf<typeof JobLaunching>, @Ctx() ctx: EventContext) {
    return this.overlays.launched(job, ctx.tx);
  }

  @EventPattern(OverlayPathsReported, JOB_OVERLAYS)
  pathsReported(@Payload() report: PayloadOf<typeof OverlayPathsReported>, @Ctx() ctx: EventContext) {
    return this.overlays.pathsReported(report, ctx.causedBy(), ctx.tx);
  }

  @EventPattern([JobCompleted, JobFailed, JobCancelled], JOB_OVERLAYS)
  ended(@Payload() job: { readonly jobId: string }, @Ctx() ctx: EventContext) {
    return this.overlays.ended(job.jobId, ctx.tx);
  }
}
