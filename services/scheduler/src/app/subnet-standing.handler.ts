import { type PayloadOf, SubnetMemberStandingChanged } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { standingRowOf, standsBetter } from '../domain/subnet-standing';
import { upsertStanding } from '../infra/subnet-standing.repository';
import type { PlacementEngine } from './placement.engine';
import type { SchedulerOptions } from './scheduler.options';
import { PLACEMENT_ENGINE, SCHEDULER_OPTIONS } from './scheduler.tokens';

/**
 * Settlement's standing of providers in subnets into the scheduler's own projection, in the
 * consumer's transaction (the row and the checkpoint commit together), the event later in the
 * SETTLEMENT stream winning. A provider newly in good standing can make a parked job placeable, so
 * parked jobs try again after it; one losing its standing wakes nothing (the next round leaves it
 * out).
 */
@Controller()
export class SubnetStandingHandler {
  constructor(
    @Inject(PLACEMENT_ENGINE) private readonly engine: PlacementEngine,
    @Inject(SCHEDULER_OPTIONS) private readonly options: SchedulerOptions,
  ) {}

  @EventPattern(SubnetMemberStandingChanged, durable('scheduler-subnet-standing'))
  async standingChanged(
    @Payload() event: PayloadOf<typeof SubnetMemberStandingChanged>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const row = standingRowOf(event, ctx.streamSequence);
    const before = await upsertStanding(ctx.tx, row);
    const applied = before === null || before.seq < row.seq;
    if (applied && standsBetter(before, row, this.options.clock.now().getTime()))
      ctx.tx.onCommit(() => this.engine.capacityChanged());
  }
}
