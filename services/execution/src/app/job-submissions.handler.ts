import { JobCancelRequested, JobSubmitted, JobSubmittedV1, type PayloadOf } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JobProcessManager } from './job-process.manager';

/** The gateway's durable consumer: submissions and cancel requests. */
export const GATEWAY_CONSUMER = 'execution-gateway';

/** Submissions and cancel requests from the gateway, as commands on the job. */
@Controller()
export class JobSubmissionsHandler {
  constructor(@Inject(JobProcessManager) private readonly jobs: JobProcessManager) {}

  /** v1 submissions arrive upcast to v2 (spec null): such a job fails when it is placed. */
  @EventPattern([JobSubmittedV1, JobSubmitted], durable(GATEWAY_CONSUMER))
  async submitted(@Payload() job: PayloadOf<typeof JobSubmitted>, @Ctx() ctx: EventContext): Promise<void> {
    const { jobId, tenantId, gpuClasses, spec } = job;
    await this.jobs.decide(
      jobId,
      { type: 'AcceptSubmission', submission: { jobId, tenantId, gpuClasses, spec } },
      ctx.causedBy(),
      ctx.tx,
    );
  }

  @EventPattern(JobCancelRequested, durable(GATEWAY_CONSUMER))
  async cancelRequested(
    @Payload() cancel: PayloadOf<typeof JobCancelRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.jobs.decide(
      cancel.jobId,
      { type: 'CancelJob', jobId: cancel.jobId, reason: cancel.reason },
      ctx.causedBy(),
      ctx.tx,
    );
  }
}
