import { JobSubmitted, JobSubmittedV1, type PayloadOf } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { JobIntake } from './job-intake.service';
import { JOB_INTAKE } from './scheduler.tokens';

/** The gateway accepted a job: its spec (v1 arrives upcast, without one). */
@Controller()
export class SubmittedJobsHandler {
  constructor(@Inject(JOB_INTAKE) private readonly intake: JobIntake) {}

  @EventPattern([JobSubmittedV1, JobSubmitted], durable('scheduler-submitted-jobs'))
  submitted(@Payload() job: PayloadOf<typeof JobSubmitted>, @Ctx() ctx: EventContext): Promise<void> {
    return this.intake.submitted(job.jobId, job.spec, ctx.causedBy(), ctx.tx);
  }
}
