import { type PayloadOf, ProviderChallenged } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { SettlementReader } from '../infra/settlement-reader';
import { BENCHMARKING_CONSUMER, CONSUMER_SETTINGS } from './settlement.consumers';
import { SettlementCommands } from './settlement.commands';

/**
 * What benchmarking finds (durable consumer `settlement-benchmarking`): a failed GPU challenge is
 * evidence (`claim-mismatch`) against the provider in every subnet it is a member of (active or
 * unbonding; each subnet's decision ignores one it has released). A challenge the edge declined
 * is not evidence (an edge busy with a job declines), so it slashes nothing.
 */
@Controller()
export class BenchmarkingHandler {
  constructor(
    @Inject(SettlementCommands) private readonly commands: SettlementCommands,
    @Inject(SettlementReader) private readonly reader: SettlementReader,
  ) {}

  @EventPattern(ProviderChallenged, durable(BENCHMARKING_CONSUMER, CONSUMER_SETTINGS))
  async providerChallenged(
    @Payload() challenge: PayloadOf<typeof ProviderChallenged>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const failure = challenge.evidence.failure;
    if (challenge.outcome !== 'failed' || failure?.kind === 'declined') return;
    const evidence = {
      kind: 'claim-mismatch',
      source: 'challenge',
      jobId: challenge.jobId,
      reference: challenge.challengeId,
      detail:
        `challenge ${challenge.challengeId} of GPU ${challenge.gpuUuid} failed: ${failure ? `${failure.kind}: ${failure.detail}` : 'no verdict'}`.slice(
          0,
          1024,
        ),
    } as const;
    const beneficiaryId =
      challenge.jobId === null ? null : await this.commands.tenantOf(challenge.jobId, ctx.tx);
    for (const subnetId of await this.reader.subnetsJoinedBy(challenge.providerId, ctx.tx))
      await this.commands.proposeSlash(
        subnetId,
        { providerId: challenge.providerId, evidence, bps: null, policy: null, beneficiaryId },
        ctx.causedBy(),
        ctx.tx,
      );
  }
}
