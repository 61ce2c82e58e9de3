import { JobCancelled, type PayloadOf } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { JobIntake } from './job-intake.service';
import { JOB_INTAKE } from './scheduler.tokens';

/** Execution cancelled a job: no decision owed, nothing held. */
@Controller()
export class CancellationsHandler {
  constructor(@Inject(JOB_INTAKE) private readonly intake: JobIntake) {}

  @EventPattern(JobCancelled, durable('scheduler-cancellations'))
  cancelled(@Payload() job: PayloadOf<typeof JobCancelled>, @Ctx() ctx: EventContext): Promise<void> {
    return this.intake.cancelled(job.jobId, ctx.causedBy(), ctx.tx);
  }
}
