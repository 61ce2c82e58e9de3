import {
  type PayloadOf,
  ProviderDeregistered,
  ProviderInventoryChanged,
  ProviderOffline,
  ProviderOnline,
  ProviderRegistered,
  ProviderReservationsChanged,
} from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import {
  applyInventoryChanged,
  applyProviderDeregistered,
  applyProviderLiveness,
  applyProviderRegistered,
  applyReservationsChanged,
} from '../infra/providers.repository';

/** The durable consumer of discovery's provider events (its inbox and checkpoint key). */
export const DISCOVERY_CONSUMER = 'benchmarking-discovery';
const DISCOVERY = durable(DISCOVERY_CONSUMER);

/**
 * Keeps benchmarking's view of providers from discovery's events (stream `DISCOVERY`): the claims it
 * verifies, the addresses peers probe, liveness and busyness.
 */
@Controller()
export class DiscoveryEventsHandler {
  @EventPattern(ProviderRegistered, DISCOVERY)
  registered(@Payload() provider: PayloadOf<typeof ProviderRegistered>, @Ctx() ctx: EventContext) {
    return applyProviderRegistered(ctx.tx, provider);
  }

  @EventPattern(ProviderInventoryChanged, DISCOVERY)
  inventoryChanged(
    @Payload() provider: PayloadOf<typeof ProviderInventoryChanged>,
    @Ctx() ctx: EventContext,
  ) {
    return applyInventoryChanged(ctx.tx, provider);
  }

  @EventPattern(ProviderReservationsChanged, DISCOVERY)
  reservationsChanged(
    @Payload() provider: PayloadOf<typeof ProviderReservationsChanged>,
    @Ctx() ctx: EventContext,
  ) {
    return applyReservationsChanged(ctx.tx, provider);
  }

  @EventPattern(ProviderOnline, DISCOVERY)
  online(@Payload() provider: PayloadOf<typeof ProviderOnline>, @Ctx() ctx: EventContext) {
    return applyProviderLiveness(ctx.tx, provider.providerId, 'online');
  }

  @EventPattern(ProviderOffline, DISCOVERY)
  offline(@Payload() provider: PayloadOf<typeof ProviderOffline>, @Ctx() ctx: EventContext) {
    return applyProviderLiveness(ctx.tx, provider.providerId, 'offline');
  }

  @EventPattern(ProviderDeregistered, DISCOVERY)
  deregistered(@Payload() provider: PayloadOf<typeof ProviderDeregistered>, @Ctx() ctx: EventContext) {
    return applyProviderDeregistered(ctx.tx, provider.providerId);
  }
}
