import { edgeIdOfSubject, type PayloadOf, RankStatusReported, verifyEdgeReport } from '@gpunet/contracts';
import {
  durable,
  EVENTING,
  type EventContext,
  type EventingRuntime,
  PermanentHandlerError,
} from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { classifyStatus } from '../domain/job-execution.decider';
import { EXECUTION_METRICS, type ExecutionMetrics } from './execution.metrics';
import { JobProcessManager } from './job-process.manager';

/** The edges' durable consumer: rank statuses. */
export const RANKS_CONSUMER = 'execution-rank-status';

/** A status whose signature did not verify: dead-lettered at once, with the reason. */
export class RankStatusRejectedError extends PermanentHandlerError {
  constructor(reason: string, subject: string) {
    super('RANK_STATUS_REJECTED', `rank status on ${subject} refused: ${reason}`);
  }
}

/**
 * Rank statuses from the edges, each counted by its verdict. A status is paid from, so it must be
 * signed by the edge in its subject (`verifyEdgeReport`): a forged one is refused (dead-lettered),
 * and an unsigned v1 never gets here (the registry refuses it). An edge starts no chain of the
 * job's (a status carries its own id as correlation), so what a status decides keeps the job's
 * correlation and names the status as its cause.
 */
@Controller()
export class RankStatusesHandler {
  constructor(
    @Inject(JobProcessManager) private readonly jobs: JobProcessManager,
    @Inject(EXECUTION_METRICS) private readonly metrics: ExecutionMetrics,
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
  ) {}

  @EventPattern(RankStatusReported, durable(RANKS_CONSUMER))
  async reported(
    @Payload() status: PayloadOf<typeof RankStatusReported>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const edgeId = edgeIdOfSubject(ctx.subject, this.eventing.prefix);
    if (edgeId === undefined) {
      this.metrics.rankStatuses.inc({ verdict: 'bad-subject' });
      return;
    }
    const failure = verifyEdgeReport(RankStatusReported, edgeId, status);
    if (failure !== null) {
      this.metrics.rankStatuses.inc({ verdict: `rejected-${failure}` });
      throw new RankStatusRejectedError(failure, ctx.subject);
    }
    // A status of a job never heard of decides nothing (`not-launched`): it cannot create a job.
    const { before } = await this.jobs.decide(
      status.jobId,
      { type: 'RecordRankStatus', edgeId, status },
      { causationId: ctx.envelope.eventId },
      ctx.tx,
    );
    this.metrics.rankStatuses.inc({ verdict: classifyStatus(before, edgeId, status) });
  }
}
