import { EscrowExhausted, type PayloadOf } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JobProcessManager } from './job-process.manager';

/** Settlement's durable consumer: jobs whose escrow ran out. */
export const ESCROW_CONSUMER = 'execution-escrow';

/** A job that used more than its escrow covers is stopped: nobody pays for what it runs past it. */
@Controller()
export class EscrowHandler {
  constructor(@Inject(JobProcessManager) private readonly jobs: JobProcessManager) {}

  @EventPattern(EscrowExhausted, durable(ESCROW_CONSUMER))
  async exhausted(
    @Payload() escrow: PayloadOf<typeof EscrowExhausted>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.jobs.decide(
      escrow.jobId,
      { type: 'StopForEscrow', jobId: escrow.jobId, unbilledGpuSeconds: escrow.unbilledGpuSeconds },
      ctx.causedBy(),
      ctx.tx,
    );
  }
}
