import {
  JobCancelled,
  JobCompleted,
  JobFailed,
  type PayloadOf,
  UsageDisputed,
  UsageReported,
} from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { CONSUMER_SETTINGS, EXECUTION_CONSUMER } from './settlement.consumers';
import { SettlementCommands } from './settlement.commands';

/**
 * What execution reports (durable consumer `settlement-execution`): usage, its disputes, and how each
 * job ended.
 */
@Controller()
export class ExecutionHandler {
  constructor(@Inject(SettlementCommands) private readonly commands: SettlementCommands) {}

  @EventPattern(UsageReported, durable(EXECUTION_CONSUMER, CONSUMER_SETTINGS))
  async usageReported(
    @Payload() report: PayloadOf<typeof UsageReported>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.meterUsage(report, ctx.causedBy(), ctx.tx);
  }

  /** A lost usage dispute is evidence against the provider: a `usage-disputed` slash in the job's subnet. */
  @EventPattern(UsageDisputed, durable(EXECUTION_CONSUMER, CONSUMER_SETTINGS))
  async usageDisputed(
    @Payload() dispute: PayloadOf<typeof UsageDisputed>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.disputeUsage(dispute, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(JobCompleted, durable(EXECUTION_CONSUMER, CONSUMER_SETTINGS))
  async jobCompleted(
    @Payload() end: PayloadOf<typeof JobCompleted>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const { jobId, usage, faults } = end;
    await this.commands.settleJob({ jobId, outcome: 'completed', usage, faults }, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(JobFailed, durable(EXECUTION_CONSUMER, CONSUMER_SETTINGS))
  async jobFailed(@Payload() end: PayloadOf<typeof JobFailed>, @Ctx() ctx: EventContext): Promise<void> {
    const { jobId, usage, faults } = end;
    await this.commands.settleJob({ jobId, outcome: 'failed', usage, faults }, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(JobCancelled, durable(EXECUTION_CONSUMER, CONSUMER_SETTINGS))
  async jobCancelled(
    @Payload() end: PayloadOf<typeof JobCancelled>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const { jobId, usage } = end;
    await this.commands.settleJob({ jobId, outcome: 'cancelled', usage, faults: [] }, ctx.causedBy(), ctx.tx);
  }
}
