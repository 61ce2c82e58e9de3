import { JobPlaced, type PayloadOf } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JobProcessManager } from './job-process.manager';

/** The scheduler's durable consumer: placements. */
export const PLACEMENTS_CONSUMER = 'execution-placements';

/**
 * Placements from the scheduler. One may come before its submission (another stream): both are
 * recorded and the job launches once it has the two.
 */
@Controller()
export class JobPlacementsHandler {
  constructor(@Inject(JobProcessManager) private readonly jobs: JobProcessManager) {}

  @EventPattern(JobPlaced, durable(PLACEMENTS_CONSUMER))
  async placed(@Payload() placement: PayloadOf<typeof JobPlaced>, @Ctx() ctx: EventContext): Promise<void> {
    await this.jobs.decide(placement.jobId, { type: 'RecordPlacement', placement }, ctx.causedBy(), ctx.tx);
  }
}
