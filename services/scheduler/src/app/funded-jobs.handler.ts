import { JobFunded, type PayloadOf } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { JobIntake } from './job-intake.service';
import { JOB_INTAKE } from './scheduler.tokens';

/** Settlement funded a job: the scheduler owes it a decision. */
@Controller()
export class FundedJobsHandler {
  constructor(@Inject(JOB_INTAKE) private readonly intake: JobIntake) {}

  @EventPattern(JobFunded, durable('scheduler-funded-jobs'))
  funded(@Payload() job: PayloadOf<typeof JobFunded>, @Ctx() ctx: EventContext): Promise<void> {
    return this.intake.funded(job, ctx.causedBy(), ctx.tx);
  }
}
