import {
  JobSubmitted,
  JobSubmittedV1,
  type PayloadOf,
  SubnetCreateRequested,
  SubnetDelegationRequested,
  SubnetJoinRequested,
  SubnetLeaveRequested,
  SubnetParametersUpdateRequested,
  SubnetProposalRequested,
  SubnetUndelegationRequested,
  SubnetVoteRequested,
  WithdrawalRequested,
} from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { CONSUMER_SETTINGS, GATEWAY_CONSUMER } from './settlement.consumers';
import { SettlementCommands } from './settlement.commands';

/** What the gateway asks of settlement (durable consumer `settlement-gateway`): jobs to fund, subnets (and their governance and delegations), withdrawals. */
@Controller()
export class GatewayHandler {
  constructor(@Inject(SettlementCommands) private readonly commands: SettlementCommands) {}

  /** Both versions: the registry upcasts v1 (no spec) to the current one. */
  @EventPattern([JobSubmittedV1, JobSubmitted], durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async jobSubmitted(
    @Payload() job: PayloadOf<typeof JobSubmitted>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.fundJob(job, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetCreateRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetCreateRequested(
    @Payload() request: PayloadOf<typeof SubnetCreateRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.createSubnet(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetParametersUpdateRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetParametersUpdateRequested(
    @Payload() request: PayloadOf<typeof SubnetParametersUpdateRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.updateSubnetParameters(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetJoinRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetJoinRequested(
    @Payload() request: PayloadOf<typeof SubnetJoinRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.joinSubnet(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetLeaveRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetLeaveRequested(
    @Payload() request: PayloadOf<typeof SubnetLeaveRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.leaveSubnet(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetProposalRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetProposalRequested(
    @Payload() request: PayloadOf<typeof SubnetProposalRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.propose(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetVoteRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetVoteRequested(
    @Payload() request: PayloadOf<typeof SubnetVoteRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.vote(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetDelegationRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetDelegationRequested(
    @Payload() request: PayloadOf<typeof SubnetDelegationRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.delegate(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(SubnetUndelegationRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async subnetUndelegationRequested(
    @Payload() request: PayloadOf<typeof SubnetUndelegationRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.undelegate(request, ctx.causedBy(), ctx.tx);
  }

  @EventPattern(WithdrawalRequested, durable(GATEWAY_CONSUMER, CONSUMER_SETTINGS))
  async withdrawalRequested(
    @Payload() request: PayloadOf<typeof WithdrawalRequested>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await this.commands.requestWithdrawal(request, ctx.causedBy(), ctx.tx);
  }
}
