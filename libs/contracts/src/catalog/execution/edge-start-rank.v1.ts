import { z } from 'zod';
import { defineCommand } from '../../message';
import { EntityIdSchema, text, UtcTimestampSchema } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';
import { EnvNameSchema, RankLimitsSchema, RankRuntimeSchema, RelativePathSchema } from './rank.schemas';

/** Why an edge refused to start a rank: a code to branch on, a sentence, the field at fault. */
export const RankRejectionSchema = z.strictObject({
  code: z.enum([
    /** The command is off contract (`field` names the part). */
    'INVALID_REQUEST',
    /** No reservation of this job with this id holds this edge's GPUs. */
    'RESERVATION_UNKNOWN',
    /** A GPU the rank would see is not in the reservation. */
    'GPU_NOT_RESERVED',
    'RANK_UNKNOWN',
    'ENV_TOO_LARGE',
    'ENV_RESERVED',
    'WORKING_DIR_INVALID',
    'IMAGE_NOT_ALLOWED',
    'RUNTIME_UNAVAILABLE',
    'DURATION_TOO_LONG',
    /** The process or container could not be created (binary missing, image missing, …). */
    'START_FAILED',
  ]),
  message: z.string().max(1024),
  field: z.string().max(256).nullable(),
});
export type RankRejection = z.infer<typeof RankRejectionSchema>;

/** Start one rank of a placed job on this edge. Idempotent per (jobId, attempt, rank). */
export const StartRankOnEdge = defineCommand({
  type: 'edge.start-rank',
  version: 1,
  subject: 'cmd.edge.{edgeId}.start-rank.v1',
  stream: CORE_REQUEST_REPLY,
  description: 'Start one rank of a placed job inside its reservation; answered started or rejected.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** 1 for the first launch of the gang; one more for every gang restart. */
    attempt: z.int().min(1).max(1000),
    /** The reservation (on this edge) whose GPUs the rank uses. */
    reservationId: text(128),
    allocation: text(128),
    rank: z.int().min(0).max(65_535),
    localRank: z.int().min(0).max(1023),
    worldSize: z.int().min(1).max(65_536),
    runtime: RankRuntimeSchema,
    /** Container image (docker runtime); null for the process runtime. */
    image: text(512).nullable(),
    /** argv; the process runtime runs `cmd[0]` with the rest as arguments (no shell). */
    cmd: z.array(z.string().max(64 * 1024)).max(4096),
    entrypoint: z
      .array(z.string().max(64 * 1024))
      .max(64)
      .nullable(),
    /** The rank's whole environment (the spec's plus gpunet's: RANK, MASTER_ADDR, …). */
    env: z.record(EnvNameSchema, z.string().max(64 * 1024)),
    workingDir: RelativePathSchema.nullable(),
    /** The reserved GPUs this rank sees (a subset of the reservation's); empty for a CPU rank. */
    gpuUuids: z.array(text(128)).max(64),
    limits: RankLimitsSchema,
    /** The edge stops the rank after this long, whatever execution says. */
    maxDurationMs: z.int().min(1),
    /**
     * The edge stops a rank that printed nothing (stdout or stderr) for this long, as hung
     * (`stopReason: "no-progress"`); null: never (the spec's `failure_recovery.progress_timeout`).
     * Absent from older senders: null.
     */
    progressTimeoutMs: z.int().min(1000).nullable().default(null),
    /** The overlay interface the rank's network lives on; null: the host's network (dev/CI). */
    overlay: z.strictObject({ interface: text(15), address: z.ipv4() }).nullable(),
  }),
});

export const RankStartReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({
    outcome: z.literal('started'),
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    /** Whether this request started it (false: it was already running or finished). */
    created: z.boolean(),
    startedAt: UtcTimestampSchema,
  }),
  z.strictObject({
    outcome: z.literal('rejected'),
    jobId: z.string().max(256),
    rank: z.int().nullable(),
    reasons: z.array(RankRejectionSchema).min(1).max(64),
  }),
]);
export type RankStartReply = z.infer<typeof RankStartReplySchema>;
