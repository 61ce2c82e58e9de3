import { type PayloadOf, ProviderOffline, ProviderOnline } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JobProcessManager } from './job-process.manager';

/** Discovery's durable consumer: providers going offline and coming back. */
export const LIVENESS_CONSUMER = 'execution-provider-liveness';

/**
 * Discovery's liveness, applied to the jobs on the provider: a gang on a provider that went
 * offline loses its ranks there at once (decided per job), instead of after the rank heartbeat
 * timeout; a provider back online may carry a restart again.
 */
@Controller()
export class ProviderLivenessHandler {
  constructor(@Inject(JobProcessManager) private readonly jobs: JobProcessManager) {}

  @EventPattern(ProviderOffline, durable(LIVENESS_CONSUMER))
  async offline(
    @Payload() provider: PayloadOf<typeof ProviderOffline>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.apply(provider.providerId, false, provider.at, provider.lastSeenAt, ctx);
  }

  @EventPattern(ProviderOnline, durable(LIVENESS_CONSUMER))
  async online(
    @Payload() provider: PayloadOf<typeof ProviderOnline>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.apply(provider.providerId, true, provider.at, null, ctx);
  }

  private async apply(
    providerId: string,
    online: boolean,
    at: string,
    lastSeenAt: string | null,
    ctx: EventContext,
  ): Promise<void> {
    for (const jobId of this.jobs.activeJobsOn(providerId))
      await this.jobs.decide(
        jobId,
        { type: 'RecordProviderLiveness', providerId, online, at, lastSeenAt },
        // The job's chain stays its own: discovery's event only causes the decision.
        { causationId: ctx.envelope.eventId },
        ctx.tx,
      );
  }
}
