import { z } from 'zod';
import { defineEvent } from '../../message';
import {
  AssetSchema,
  EntityIdSchema,
  GpuClassSchema,
  MinorUnitsSchema,
  TimestampSchema,
} from '../primitives';
import { GatewayStream } from '../streams';

/** Longest job a budget can be computed for: one year. */
export const MAX_JOB_DURATION_SECONDS = 366 * 24 * 3600;

/** v1 of `job.submitted`: the job's terms without its spec (read as v2 with `spec: null`). */
export const JobSubmittedV1 = defineEvent({
  type: 'job.submitted',
  version: 1,
  subject: 'gateway.job.submitted.v1',
  stream: GatewayStream.name,
  description:
    'A job was submitted; its budget (max price × GPUs × max duration + fees) is escrowed before scheduling.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** The orchestrator's tenant: it pays, from its wallet in `asset`. */
    tenantId: EntityIdSchema,
    subnetId: EntityIdSchema,
    asset: AssetSchema,
    /** GPUs in the gang. */
    gpus: z.int().min(1).max(4096),
    /** GPU classes the job accepts; empty means any class the subnet allows. */
    gpuClasses: z.array(GpuClassSchema).max(64).default([]),
    /** The most the orchestrator pays per GPU-hour, before fees. */
    maxPricePerGpuHour: MinorUnitsSchema,
    /** The job is stopped after this long; the budget covers exactly this much. */
    maxDurationSeconds: z.int().min(1).max(MAX_JOB_DURATION_SECONDS),
    submittedAt: TimestampSchema,
  }),
});
