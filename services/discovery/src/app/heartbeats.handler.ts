import { EdgeHeartbeat, type PayloadOf } from '@gpunet/contracts';
import { ephemeral, type MessageContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { HEARTBEATS } from './discovery.tokens';
import type { HeartbeatIngest } from './heartbeat.ingest';

/** The core-NATS subscription of edge heartbeats: a queue group, so replicas share them. */
export const HEARTBEATS_SUBSCRIPTION = 'discovery-heartbeats';

/** Edge heartbeats, as they pass: worth nothing once late, so never stored nor redelivered. */
@Controller()
export class HeartbeatsHandler {
  constructor(@Inject(HEARTBEATS) private readonly ingest: HeartbeatIngest) {}

  @EventPattern(EdgeHeartbeat, ephemeral(HEARTBEATS_SUBSCRIPTION, { queue: HEARTBEATS_SUBSCRIPTION }))
  heartbeat(@Payload() heartbeat: PayloadOf<typeof EdgeHeartbeat>, @Ctx() ctx: MessageContext): void {
    this.ingest.receive(ctx.subject, heartbeat.edgeId);
  }
}
