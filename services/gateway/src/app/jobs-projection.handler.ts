import {
  type Envelope,
  EscrowRejected,
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobFunded,
  JobLaunching,
  JobPlaced,
  JobQueued,
  JobRestarting,
  JobRunning,
  JobSettled,
  JobUnschedulable,
  OverlayPathsReported,
  RankExited,
  UsageDisputed,
  UsageMetered,
  UsageReported,
} from '@gpunet/contracts';
import { durable, type EventBatchContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { JobsProjection } from '../infra/jobs.projection';
import { JOBS_PROJECTION } from './gateway.tokens';

/** Durable consumer names (one per stream the jobs projection reads; inbox and checkpoint keys). */
export const SETTLEMENT_CONSUMER = 'gateway-jobs-settlement';
export const SCHEDULER_CONSUMER = 'gateway-jobs-scheduler';
export const EXECUTION_CONSUMER = 'gateway-jobs-execution';

/**
 * Keeps the jobs read model up to date from settlement, the scheduler and execution: each consumer
 * batch in four statements (`JobsProjection.applyBatch`), not five per event, in the batch's
 * transaction with its inbox rows and checkpoint. The gateway's own events enter the read model in
 * the transaction that appends them; it does not consume its own stream.
 */
@Controller()
export class JobsProjectionHandler {
  constructor(@Inject(JOBS_PROJECTION) private readonly projection: JobsProjection) {}

  @EventPattern(
    [JobFunded, EscrowRejected, UsageMetered, JobSettled],
    durable(SETTLEMENT_CONSUMER, { batch: true }),
  )
  fromSettlement(@Payload() envelopes: readonly Envelope[], @Ctx() ctx: EventBatchContext): Promise<void> {
    return this.projection.applyBatch(ctx.tx, envelopes);
  }

  @EventPattern([JobQueued, JobPlaced, JobUnschedulable], durable(SCHEDULER_CONSUMER, { batch: true }))
  fromScheduler(@Payload() envelopes: readonly Envelope[], @Ctx() ctx: EventBatchContext): Promise<void> {
    return this.projection.applyBatch(ctx.tx, envelopes);
  }

  @EventPattern(
    [
      JobLaunching,
      JobRunning,
      JobRestarting,
      RankExited,
      UsageReported,
      UsageDisputed,
      JobCompleted,
      JobFailed,
      JobCancelled,
      OverlayPathsReported,
    ],
    durable(EXECUTION_CONSUMER, { batch: true }),
  )
  fromExecution(@Payload() envelopes: readonly Envelope[], @Ctx() ctx: EventBatchContext): Promise<void> {
    return this.projection.applyBatch(ctx.tx, envelopes);
  }
}
