import {
  GpuBenchmarked,
  GpuVerificationChanged,
  LinkMeasured,
  NetworkCoordinatesRefitted,
  type PayloadOf,
  ProviderChallenged,
  ProviderReliabilityChanged,
} from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import {
  challengeFailureRowOf,
  coordinateRowsOf,
  linkRowOf,
  profileRowOf,
  reliabilityRowOf,
  verificationRowOf,
  verifiesMore,
} from '../domain/measurements';
import {
  upsertChallengeFailure,
  upsertCoordinates,
  upsertLink,
  upsertProfile,
  upsertReliability,
  upsertVerification,
} from '../infra/measurements.repository';
import type { PlacementEngine } from './placement.engine';
import { PLACEMENT_ENGINE } from './scheduler.tokens';

const MEASUREMENTS = durable('scheduler-measurements');

/**
 * Benchmarking's measurements into the scheduler's own projection, in the consumer's transaction
 * (the row and the checkpoint commit together). A new figure can make a parked job placeable (a
 * GPU measured fast enough, a pair now measured close enough, a GPU verified), so parked jobs try
 * again after it. Benchmarking's trust in providers comes the same way: GPU verification (a GPU
 * newly verified wakes parked jobs; one that lost it wakes nothing, the next round excludes it),
 * reliability scores (they only order gangs that fit anyway, so they wake nothing) and failed
 * challenges (what an explanation quotes for an unverified GPU).
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

  @EventPattern(GpuVerificationChanged, MEASUREMENTS)
  async verificationChanged(
    @Payload() event: PayloadOf<typeof GpuVerificationChanged>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const row = verificationRowOf(event);
    const before = await upsertVerification(ctx.tx, row);
    const applied = before === null || before.atMs <= row.atMs;
    if (applied && verifiesMore(before, row)) ctx.tx.onCommit(() => this.engine.capacityChanged());
  }

  @EventPattern(ProviderReliabilityChanged, MEASUREMENTS)
  async reliabilityChanged(
    @Payload() event: PayloadOf<typeof ProviderReliabilityChanged>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await upsertReliability(ctx.tx, reliabilityRowOf(event));
  }

  @EventPattern(ProviderChallenged, MEASUREMENTS)
  async challenged(
    @Payload() event: PayloadOf<typeof ProviderChallenged>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    const failure = challengeFailureRowOf(event);
    if (failure !== null) await upsertChallengeFailure(ctx.tx, failure);
  }
}
