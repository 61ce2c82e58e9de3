import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, EntityIdSchema, text, UtcTimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';

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
