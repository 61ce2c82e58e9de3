import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, text, UtcTimestampSchema } from '../primitives';
import { SchedulerStream } from '../streams';

/** One edge's share of a placed gang: the GPUs it reserved and the reservation that holds them. */
export const PlacedNodeSchema = z.strictObject({
  /** The provider's edge id (its public nkey). */
  providerId: text(128),
  hostId: text(256),
  gpuUuids: z.array(text(128)).min(1).max(64),
  /** The reservation the edge accepted for these GPUs. */
  reservationId: text(128),
  /** Ranks this node runs. */
  ranks: z.int().min(1).max(64),
});
export type PlacedNode = z.infer<typeof PlacedNodeSchema>;

export const PlacedAllocationSchema = z.strictObject({
  /** The allocation's name in the ensemble (`main` for a single gang). */
  name: text(128),
  gpuCount: z.int().min(1).max(4096),
  nodes: z.array(PlacedNodeSchema).min(1).max(4096),
  /** The core's predicted time of one training step, in µs (compute + all-reduce). */
  predictedStepUs: z.number().min(0),
  /** Sum of the chosen GPUs' prices per hour, in minor units of the job's asset. */
  pricePerHourMinor: MinorUnitsSchema,
});
export type PlacedAllocation = z.infer<typeof PlacedAllocationSchema>;

/**
 * How an auction subnet's job cleared (ADR 0071): the sealed bids of the GPUs placed and the
 * uniform price every provider of the job is paid (the highest of those bids).
 */
export const AuctionClearingSchema = z.strictObject({
  rule: z.literal('uniform-highest-placed-bid'),
  clearingPricePerGpuHour: MinorUnitsSchema,
  bids: z
    .array(z.strictObject({ providerId: text(128), gpuUuid: text(128), pricePerGpuHour: MinorUnitsSchema }))
    .min(1)
    .max(4096),
});
export type AuctionClearing = z.infer<typeof AuctionClearingSchema>;

/** Every edge accepted its reservation before the deadline: the gang is committed. */
export const JobPlaced = defineEvent({
  type: 'job.placed',
  version: 1,
  subject: 'scheduler.job.placed.v1',
  stream: SchedulerStream.name,
  description: 'The gang is placed: every chosen edge accepted its reservation. Execution starts the ranks.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    asset: z.string().min(1).max(16),
    allocations: z.array(PlacedAllocationSchema).min(1).max(64),
    /** The reservations lapse at this instant unless the job starts. */
    holdUntil: UtcTimestampSchema,
    /** Reservation rounds it took (1 = first try). */
    attempt: z.int().min(1),
    at: UtcTimestampSchema,
    /** Present for a job in an auction subnet: what it cleared at. */
    auction: AuctionClearingSchema.optional(),
  }),
});
