import { z } from 'zod';
import { defineEvent } from '../message';
import { EntityIdSchema, MinorUnitsSchema, text, UtcTimestampSchema } from './primitives';
import { SchedulerStream } from './streams';

/*
 * The scheduler (F5): gang placement with two-phase reservation on the edges (DESIGN.md §4.4–4.5).
 * It consumes `job.funded` and capacity events (`provider.online`, `provider.reservations-changed`)
 * and announces where a job runs (`job.placed`), that it waits for capacity (`job.queued`) or that
 * it cannot run as asked (`job.unschedulable`, with the core's reasons in words).
 */

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

/** A reason the scheduling core gave, as it gave it: plugin, code, sentence and GPU count. */
export const UnschedulableReasonSchema = z.strictObject({
  plugin: text(128),
  reason: text(128),
  message: z.string().max(1024),
  /** Free GPUs this filter ruled out first; null for reasons about the gang as a whole. */
  gpus: z.int().min(0).nullable(),
});

/** A job entered the queue (funded, or back after a failed reservation round). */
export const JobQueued = defineEvent({
  type: 'job.queued',
  version: 1,
  subject: 'scheduler.job.queued.v1',
  stream: SchedulerStream.name,
  description: 'A job waits for capacity; it is retried on capacity events, fairly across tenants.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    /** 1 for the first round; grows with every requeue. */
    attempt: z.int().min(1),
    /** Why it waits (the last round's outcome), for people; null when just funded. */
    reason: z.string().max(1024).nullable(),
    at: UtcTimestampSchema,
  }),
});

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
  }),
});

/** The job cannot run as asked; a person must change the job (or wait for the inventory). */
export const JobUnschedulable = defineEvent({
  type: 'job.unschedulable',
  version: 1,
  subject: 'scheduler.job.unschedulable.v1',
  stream: SchedulerStream.name,
  description:
    'The job cannot be placed as asked; carries the scheduling core’s sentence and reasons a person can act on.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    /** `UnschedulableAndUnresolvable`: no cluster state could hold it; `RetriesExhausted`: edges kept declining. */
    code: z.enum(['UnschedulableAndUnresolvable', 'Unschedulable', 'Error', 'RetriesExhausted']),
    allocation: z.string().max(128).nullable(),
    /** One sentence: "8 GPUs asked; 6 match ≥ 40 GB, in subnet 'ai'; …". */
    message: z.string().max(2048),
    reasons: z.array(UnschedulableReasonSchema).max(64),
    at: UtcTimestampSchema,
  }),
});

/** Every scheduler message, for registries. */
export const schedulerMessages = [JobQueued, JobPlaced, JobUnschedulable] as const;
