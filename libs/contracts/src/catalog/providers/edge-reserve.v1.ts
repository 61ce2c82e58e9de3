import { z } from 'zod';
import { defineCommand } from '../../message';
import { text, UtcTimestampSchema } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';
import { IsolationLevelSchema } from './isolation.schemas';
import { ByteCountSchema, EdgeAssetSchema, MinorAmountSchema } from './providers.schemas';

/** Asks an edge to hold GPUs for a job; the edge re-checks its policy and answers `ReservationReply`. */
export const ReserveOnEdge = defineCommand({
  type: 'edge.reserve',
  version: 1,
  subject: 'cmd.edge.{edgeId}.reserve.v1',
  stream: CORE_REQUEST_REPLY,
  description: 'Hold these GPUs for a job until holdUntil; answered with accepted or declined and reasons.',
  schema: z.strictObject({
    reservationId: text(128),
    jobId: text(128),
    gpuUuids: z.array(z.string().min(1).max(128)).min(1).max(64),
    cpuMillicores: z.int().min(0),
    memoryBytes: ByteCountSchema,
    /** null: no image yet (a benchmark reservation). */
    image: text(512).nullable(),
    maxDurationMs: z.int().min(1),
    subnet: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
      .nullable(),
    asset: EdgeAssetSchema,
    pricePerGpuHourMinor: MinorAmountSchema,
    /** The reservation lapses at this instant unless the job starts. */
    holdUntil: UtcTimestampSchema,
    /**
     * The weakest isolation the job's subnet accepts (its terms' `trust.minimumIsolation`); the edge
     * declines `ISOLATION_TOO_WEAK` when it runs ranks with less. Default: any (a benchmark hold).
     */
    minimumIsolation: IsolationLevelSchema.default('host-process'),
  }),
});

/** Why an edge declined: a code to branch on, a message for people, the request field at fault. */
export const DeclineReasonSchema = z.strictObject({
  code: z.enum([
    'GPU_UNKNOWN',
    'GPU_NOT_SHARED',
    'GPU_BUSY',
    'TOO_MANY_GPUS',
    'CPU_UNAVAILABLE',
    'MEMORY_UNAVAILABLE',
    'IMAGE_NOT_ALLOWED',
    'ASSET_NOT_ACCEPTED',
    'PRICE_BELOW_FLOOR',
    'SUBNET_NOT_JOINED',
    'DURATION_TOO_LONG',
    'OUTSIDE_AVAILABILITY',
    'HOLD_EXPIRED',
    'RESERVATION_CONFLICT',
    /** The edge runs ranks with less isolation than the job's subnet requires (ADR 0072). */
    'ISOLATION_TOO_WEAK',
    /** The command itself is off contract (`field` names the part). */
    'INVALID_REQUEST',
  ]),
  message: z.string().max(512),
  field: z.string().max(128).nullable(),
});
export type DeclineReason = z.infer<typeof DeclineReasonSchema>;

export const ReservationReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({ reservationId: text(128), outcome: z.literal('accepted'), reasons: z.array(z.never()) }),
  z.strictObject({
    reservationId: text(128),
    outcome: z.literal('declined'),
    reasons: z.array(DeclineReasonSchema).min(1).max(64),
  }),
]);
export type ReservationReply = z.infer<typeof ReservationReplySchema>;
