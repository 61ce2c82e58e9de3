import {
  type PayloadOf,
  ProviderInventoryChanged,
  ProviderOnline,
  ProviderPolicyChanged,
  ProviderRegistered,
  ProviderReservationsChanged,
} from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { PlacementEngine } from './placement.engine';
import { PLACEMENT_ENGINE } from './scheduler.tokens';

const CAPACITY = durable('scheduler-capacity');

/**
 * Discovery's provider events: capacity may have appeared, so parked jobs try again (no polling);
 * a provider's reported reservations also free the GPUs of its placed jobs that ended.
 */
@Controller()
export class CapacityHandler {
  constructor(@Inject(PLACEMENT_ENGINE) private readonly engine: PlacementEngine) {}

  @EventPattern(
    [ProviderOnline, ProviderRegistered, ProviderInventoryChanged, ProviderPolicyChanged],
    CAPACITY,
  )
  changed(@Ctx() ctx: EventContext): void {
    ctx.tx.onCommit(() => this.engine.capacityChanged());
  }

  @EventPattern(ProviderReservationsChanged, CAPACITY)
  reservationsChanged(
    @Payload() report: PayloadOf<typeof ProviderReservationsChanged>,
    @Ctx() ctx: EventContext,
  ): void {
    ctx.tx.onCommit(() => {
      this.engine.reservationsChanged(
        report.providerId,
        report.reservations.flatMap((r) => r.gpuUuids),
      );
      this.engine.capacityChanged();
    });
  }
}
