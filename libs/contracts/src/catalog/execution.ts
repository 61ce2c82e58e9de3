import { z } from 'zod';
import { defineCommand, defineEvent } from '../message';
import { EdgeIdSchema, EntityIdSchema, text, UtcTimestampSchema } from './primitives';
import {
  CORE_REQUEST_REPLY,
  EdgeRanksStream,
  ExecutionStream,
  GatewayStream,
  JobLogsStream,
} from './streams';

/*
 * Execution (F6): the job process manager starts the ranks of a placed gang on its edges, watches
 * them to the end and meters them (DESIGN.md §4.6, ADR 0040).
 *
 *   execution ──cmd.edge.{edgeId}.start-rank.v1──▶ edge   (core request/reply: started | rejected)
 *   execution ──cmd.edge.{edgeId}.stop-ranks.v1──▶ edge   (core request/reply, idempotent)
 *   edge ──edge.{edgeId}.rank-status.v1──▶ EDGE_RANKS     (JetStream; execution consumes durably)
 *   edge ──edge.{edgeId}.log.{jobId}.v1──▶ JOB_LOGS       (core publish, bounded: never blocks a rank)
 *
 * Every rank start carries the job's `attempt` (1, then one more per gang restart): a status of an
 * older attempt is recognised and ignored, and a start the edge has already seen for the same
 * (job, attempt, rank) is answered `started` again without starting a second process — so a
 * restarted execution service may re-send every start it is unsure about.
 */

// ---------------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------------

/** Most environment variables one rank may get, and their total size (names + values), bytes. */
export const MAX_RANK_ENV_ENTRIES = 512;
export const MAX_RANK_ENV_BYTES = 256 * 1024;

/** A POSIX environment variable name. */
export const EnvNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');

/**
 * A working directory relative to the rank's workspace: no `..` segment, not absolute, no NUL.
 * The edge resolves it inside the workspace and checks again (symlinks).
 */
export const RelativePathSchema = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => !p.startsWith('/'), 'must be relative to the rank workspace, not absolute')
  .refine((p) => !p.split('/').includes('..'), 'must not leave the rank workspace (no ".." segment)')
  .refine((p) => !p.includes('\0'), 'must not contain NUL');

export const RankRuntimeSchema = z.enum(['process', 'docker']);
export type RankRuntimeKind = z.infer<typeof RankRuntimeSchema>;

/** Limits the edge applies to a rank where its runtime and OS allow. */
export const RankLimitsSchema = z.strictObject({
  cpuMillicores: z.int().min(0).max(4_096_000),
  memoryBytes: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** Processes/threads the rank may have at once; null: the runtime's default. */
  pids: z.int().min(16).max(1_000_000).nullable(),
});
export type RankLimits = z.infer<typeof RankLimitsSchema>;

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

// ---------------------------------------------------------------------------------------------------
// Control plane → edge (request/reply)
// ---------------------------------------------------------------------------------------------------

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

/** Stop a job's ranks on this edge (all attempts up to `attempt`, or all). Idempotent. */
export const StopRanksOnEdge = defineCommand({
  type: 'edge.stop-ranks',
  version: 1,
  subject: 'cmd.edge.{edgeId}.stop-ranks.v1',
  stream: CORE_REQUEST_REPLY,
  description: "Stop a job's ranks on this edge: SIGTERM, then SIGKILL after the grace period.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** Stop ranks of this attempt and older; null: every attempt. */
    attempt: z.int().min(1).nullable(),
    reason: z.enum(['cancelled', 'max-duration', 'gang-failed', 'restart', 'start-barrier', 'shutdown']),
    graceMs: z.int().min(0).max(300_000),
  }),
});

export const StopRanksReplySchema = z.strictObject({
  jobId: z.string().max(256),
  /** Ranks that were running and were signalled. */
  stopping: z.int().min(0),
});
export type StopRanksReply = z.infer<typeof StopRanksReplySchema>;

// ---------------------------------------------------------------------------------------------------
// Edge → control plane
// ---------------------------------------------------------------------------------------------------

export const RankStateSchema = z.enum(['running', 'exited']);

/**
 * A rank's lifecycle on its edge: `running` when it started (and every heartbeat period while it
 * runs), `exited` once with its exit code or signal. Not signed: NATS permissions let only this
 * edge publish on its subject, and execution accepts a status only from the edge the rank was
 * placed on.
 */
export const RankStatusReported = defineEvent({
  type: 'edge.rank-status',
  version: 1,
  subject: 'edge.{edgeId}.rank-status.v1',
  stream: EdgeRanksStream.name,
  description: 'A rank started, is still running, or exited (code or signal), as its edge saw it.',
  schema: z.strictObject({
    edgeId: EdgeIdSchema,
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    state: RankStateSchema,
    startedAt: UtcTimestampSchema,
    /** Set when `state` is exited. */
    exitedAt: UtcTimestampSchema.nullable(),
    exitCode: z.int().nullable(),
    signal: z.string().max(32).nullable(),
    /** Why the edge stopped it, when it did (`cancelled`, `max-duration`, `oom`, `edge-restart`…). */
    stopReason: z.string().max(128).nullable(),
    /** Wall seconds the rank has run (so far, or in all). */
    wallSeconds: z.number().min(0),
    reportedAt: UtcTimestampSchema,
  }),
});

/** A chunk of a rank's output. Best effort: dropped (and counted) rather than block the rank. */
export const RankLogChunk = defineEvent({
  type: 'edge.rank-log',
  version: 1,
  subject: 'edge.{edgeId}.log.{jobId}.v1',
  stream: JobLogsStream.name,
  description: 'Lines a rank wrote to stdout or stderr; `dropped` counts lines lost to back-pressure.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    stream: z.enum(['stdout', 'stderr']),
    /** Per (job, attempt, rank, stream), from 1. */
    seq: z.int().min(1),
    lines: z.array(z.string().max(16 * 1024)).max(1024),
    dropped: z.int().min(0),
    at: UtcTimestampSchema,
  }),
});

// ---------------------------------------------------------------------------------------------------
// Gateway → execution
// ---------------------------------------------------------------------------------------------------

/** The orchestrator asked to cancel a job (at any stage). Execution stops its ranks and cancels it. */
export const JobCancelRequested = defineEvent({
  type: 'job.cancel-requested',
  version: 1,
  subject: 'gateway.job.cancel-requested.v1',
  stream: GatewayStream.name,
  description: 'An orchestrator asked to cancel a job; execution stops its ranks and emits job.cancelled.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    reason: z.string().max(1024).nullable(),
    requestedAt: z.iso.datetime({ offset: true }),
  }),
});

// ---------------------------------------------------------------------------------------------------
// Execution's job aggregate
// ---------------------------------------------------------------------------------------------------

/** One rank of a launch: where it runs and what it sees. */
export const LaunchedRankSchema = z.strictObject({
  rank: z.int().min(0),
  localRank: z.int().min(0),
  nodeRank: z.int().min(0),
  allocation: text(128),
  providerId: EdgeIdSchema,
  hostId: text(256),
  reservationId: text(128),
  gpuUuids: z.array(text(128)).max(64),
  gpuClass: text(64),
  /** The address other ranks reach this rank's host at (overlay address or host address). */
  address: z.string().max(64),
});
export type LaunchedRank = z.infer<typeof LaunchedRankSchema>;

/** Execution sent the start of every rank of an attempt; the start barrier runs until `barrierUntil`. */
export const JobLaunching = defineEvent({
  type: 'job.launching',
  version: 1,
  subject: 'execution.job.launching.v1',
  stream: ExecutionStream.name,
  description: "A gang attempt's ranks are being started; the barrier waits until all run or its deadline.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    attempt: z.int().min(1),
    worldSize: z.int().min(1),
    masterAddr: z.string().max(64),
    masterPort: z.int().min(1).max(65_535),
    ranks: z.array(LaunchedRankSchema).min(1).max(65_536),
    barrierUntil: UtcTimestampSchema,
    at: UtcTimestampSchema,
  }),
});

/** Every rank of the attempt runs: the gang passed its start barrier. */
export const JobRunning = defineEvent({
  type: 'job.running',
  version: 1,
  subject: 'execution.job.running.v1',
  stream: ExecutionStream.name,
  description: 'Every rank of the attempt has started; the job runs until its ranks exit or its deadline.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    runUntil: UtcTimestampSchema,
    at: UtcTimestampSchema,
  }),
});

/** A rank exited (any code). Execution decides the gang's fate from these. */
export const RankExited = defineEvent({
  type: 'rank.exited',
  version: 1,
  subject: 'execution.rank.exited.v1',
  stream: ExecutionStream.name,
  description: 'A rank of the gang exited with a code or a signal, as its edge reported it.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    providerId: EdgeIdSchema,
    exitCode: z.int().nullable(),
    signal: z.string().max(32).nullable(),
    wallSeconds: z.number().min(0),
    at: UtcTimestampSchema,
  }),
});

/** The gang is restarted after a failure (policy `restart_all`), as attempt `attempt`. */
export const JobRestarting = defineEvent({
  type: 'job.restarting',
  version: 1,
  subject: 'execution.job.restarting.v1',
  stream: ExecutionStream.name,
  description: 'A rank failed; every rank is stopped and the gang starts again as the next attempt.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** The attempt about to start. */
    attempt: z.int().min(2),
    reason: z.strictObject({ code: text(128), message: z.string().max(4096) }),
    at: UtcTimestampSchema,
  }),
});

/** Every execution-side message, for registries. */
export const executionMessages = [
  StartRankOnEdge,
  StopRanksOnEdge,
  RankStatusReported,
  RankLogChunk,
  JobCancelRequested,
  JobLaunching,
  JobRunning,
  RankExited,
  JobRestarting,
] as const;
