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
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import {
  applyInventoryChanged,
  applyProviderDeregistered,
  applyProviderLiveness,
  applyProviderRegistered,
  applyReservationsChanged,
  loadClaim,
} from '../infra/providers.repository';
import { ProviderBenchmarks } from './provider-benchmarks.service';

/** The durable consumer of discovery's provider events (its inbox and checkpoint key). */
export const DISCOVERY_CONSUMER = 'benchmarking-discovery';
const DISCOVERY = durable(DISCOVERY_CONSUMER);

/**
 * Keeps benchmarking's view of providers from discovery's events (stream `DISCOVERY`): the claims it
 * verifies, the addresses peers probe, liveness and busyness. A registration or an inventory change
 * also puts the claim's GPUs on the provider's stream: `pending` until challenged, or `simulated`.
 */
@Controller()
export class DiscoveryEventsHandler {
  constructor(@Inject(ProviderBenchmarks) private readonly benchmarks: ProviderBenchmarks) {}

  @EventPattern(ProviderRegistered, DISCOVERY)
  async registered(@Payload() provider: PayloadOf<typeof ProviderRegistered>, @Ctx() ctx: EventContext) {
    await applyProviderRegistered(ctx.tx, provider);
    await this.registerGpus(provider.providerId, ctx);
  }

  @EventPattern(ProviderInventoryChanged, DISCOVERY)
  async inventoryChanged(
    @Payload() provider: PayloadOf<typeof ProviderInventoryChanged>,
    @Ctx() ctx: EventContext,
  ) {
    await applyInventoryChanged(ctx.tx, provider);
    await this.registerGpus(provider.providerId, ctx);
  }

  /** The GPUs of the claim the view now holds (an out-of-order older report changed nothing). */
  private async registerGpus(providerId: string, ctx: EventContext): Promise<void> {
    const claim = await loadClaim(ctx.tx, providerId);
    if (claim === null) return;
    await this.benchmarks.registerGpus(
      providerId,
      claim.simulated,
      claim.gpus.map((g) => g.uuid),
      ctx.causedBy(),
      ctx.tx,
    );
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
