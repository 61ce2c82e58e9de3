import { GpuBenchmarked, LinkMeasured, NetworkCoordinatesRefitted, type PayloadOf } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { coordinateRowsOf, linkRowOf, profileRowOf } from '../domain/measurements';
import { upsertCoordinates, upsertLink, upsertProfile } from '../infra/measurements.repository';
import type { PlacementEngine } from './placement.engine';
import { PLACEMENT_ENGINE } from './scheduler.tokens';

const MEASUREMENTS = durable('scheduler-measurements');

/**
 * Benchmarking's measurements into the scheduler's own projection, in the consumer's transaction
 * (the row and the checkpoint commit together). A new figure can make a parked job placeable (a
 * GPU measured fast enough, a pair now measured close enough), so parked jobs try again after it.
 */
@Controller()
export class MeasurementsHandler {
  constructor(@Inject(PLACEMENT_ENGINE) private readonly engine: PlacementEngine) {}

  @EventPattern(GpuBenchmarked, MEASUREMENTS)
  async benchmarked(
    @Payload() event: PayloadOf<typeof GpuBenchmarked>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await upsertProfile(ctx.tx, profileRowOf(event));
    ctx.tx.onCommit(() => this.engine.capacityChanged());
  }

  @EventPattern(LinkMeasured, MEASUREMENTS)
  async linkMeasured(
    @Payload() event: PayloadOf<typeof LinkMeasured>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await upsertLink(ctx.tx, linkRowOf(event));
    ctx.tx.onCommit(() => this.engine.capacityChanged());
  }

  @EventPattern(NetworkCoordinatesRefitted, MEASUREMENTS)
  async coordinatesRefitted(
    @Payload() event: PayloadOf<typeof NetworkCoordinatesRefitted>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await upsertCoordinates(ctx.tx, coordinateRowsOf(event));
    ctx.tx.onCommit(() => this.engine.capacityChanged());
  }
}
