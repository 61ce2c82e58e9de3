import { type PayloadOf, ProviderReservationsChanged } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JobProcessManager } from './job-process.manager';

/** Discovery's durable consumer: the reservations each edge holds. */
export const RESERVATIONS_CONSUMER = 'execution-reservations';

/**
 * The reservations an edge holds, as discovery read them from its signed report: a running job
 * whose reservation on that edge is gone was abandoned by the provider (decided per job).
 */
@Controller()
export class ReservationsHandler {
  constructor(@Inject(JobProcessManager) private readonly jobs: JobProcessManager) {}

  @EventPattern(ProviderReservationsChanged, durable(RESERVATIONS_CONSUMER))
  async changed(
    @Payload() report: PayloadOf<typeof ProviderReservationsChanged>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const held = report.reservations.map((r) => r.reservationId);
    for (const jobId of this.jobs.activeJobsOn(report.providerId))
      await this.jobs.decide(
        jobId,
        { type: 'RecordReservations', providerId: report.providerId, held, reportedAt: report.at },
        // The job's chain stays its own: the report only causes the decision.
        { causationId: ctx.envelope.eventId },
        ctx.tx,
      );
  }
}
