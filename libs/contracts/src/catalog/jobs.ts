import { NormalizedSpecSchema } from '@gpunet/ensemble-spec';
import { z } from 'zod';
import { defineEvent } from '../message';
import { defineUpcaster } from '../registry';
import {
  AssetSchema,
  EntityIdSchema,
  FaultKindSchema,
  GpuClassSchema,
  MinorUnitsSchema,
  TimestampSchema,
} from './primitives';
import { ExecutionStream, GatewayStream } from './streams';

/*
 * The job lifecycle as other services announce it: the gateway submits jobs, execution reports
 * usage and the end of every job. Settlement consumes all of them (escrow, metering, payout); the
 * scheduler and the gateway will too. Money is never a float: amounts are integers in an asset's
 * smallest unit, carried as decimal strings so that they survive JSON (and u128-sized values)
 * exactly; counts and seconds are safe integers.
 */

/** Longest job a budget can be computed for: one year. */
export const MAX_JOB_DURATION_SECONDS = 366 * 24 * 3600;

/**
 * What one provider's GPUs did for one job. `gpuSeconds` is **cumulative** since the job started —
 * like a meter reading, not an increment — so a report can be lost, repeated or reordered without
 * changing the bill: settlement charges the highest reading it has seen.
 */
export const ProviderUsageSchema = z.strictObject({
  providerId: EntityIdSchema,
  gpuClass: GpuClassSchema,
  /** GPUs of this provider in the job's gang. */
  gpus: z.int().min(1).max(4096),
  /** GPU-seconds used so far (GPUs × wall seconds), cumulative since the job started. */
  gpuSeconds: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  /**
   * Price per GPU-hour agreed at placement, for subnets that price by auction (at least their
   * reserve price); absent where the subnet's fixed price table applies.
   */
  agreedPricePerGpuHour: MinorUnitsSchema.optional(),
});

/**
 * A provider's fault during a job. Usage beyond `billableGpuSeconds` (the work lost to the fault:
 * since the fault, or since the last checkpoint it invalidated) is never paid.
 */
export const ProviderFaultSchema = z.strictObject({
  providerId: EntityIdSchema,
  kind: FaultKindSchema,
  /** GPU-seconds of this provider's (cumulative) usage that are still paid. */
  billableGpuSeconds: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** Whether the fault was verified (only verified faults are slashed). */
  verified: z.boolean(),
  detail: z.string().max(1024).optional(),
});

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

/**
 * An orchestrator submitted a job; settlement holds its budget in escrow before it is scheduled,
 * the scheduler places it and execution runs it from `spec`, the normalized ensemble spec the
 * gateway validated (`@gpunet/ensemble-spec`). `spec` is null only for jobs submitted as v1.
 */
export const JobSubmitted = defineEvent({
  type: 'job.submitted',
  version: 2,
  subject: 'gateway.job.submitted.v2',
  stream: GatewayStream.name,
  description:
    'A job was submitted with its normalized spec; its budget (max price × GPUs × max duration + fees) is escrowed before scheduling.',
  schema: JobSubmittedV1.schema.extend({ spec: NormalizedSpecSchema.nullable().default(null) }),
});

export const jobSubmittedV1ToV2 = defineUpcaster({
  from: JobSubmittedV1,
  to: JobSubmitted,
  upcast: (data) => ({ ...data, spec: null }),
});

/** A usage report for a running job (cumulative meter readings per provider). */
export const UsageReported = defineEvent({
  type: 'usage.reported',
  version: 1,
  subject: 'execution.usage.reported.v1',
  stream: ExecutionStream.name,
  description: 'GPU-seconds each provider has used for a job so far (cumulative readings).',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** Increases with every report execution sends for this job, from 1. */
    seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
    providers: z.array(ProviderUsageSchema).min(1).max(4096),
    reportedAt: TimestampSchema,
  }),
});

/** Final readings, the same shape as a report's; an empty list means no rank ever ran. */
const FinalUsage = z.array(ProviderUsageSchema).max(4096).default([]);

export const JobCompleted = defineEvent({
  type: 'job.completed',
  version: 1,
  subject: 'execution.job.completed.v1',
  stream: ExecutionStream.name,
  description: 'Every rank exited successfully; carries the final usage per provider.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    usage: FinalUsage,
    /** Providers that faulted but were recovered from (the job still completed). */
    faults: z.array(ProviderFaultSchema).max(4096).default([]),
    completedAt: TimestampSchema,
  }),
});

export const JobFailed = defineEvent({
  type: 'job.failed',
  version: 1,
  subject: 'execution.job.failed.v1',
  stream: ExecutionStream.name,
  description: 'The job failed for good; carries the final usage and the providers at fault, if any.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    reason: z.strictObject({ code: z.string().min(1).max(128), message: z.string().max(4096) }),
    usage: FinalUsage,
    faults: z.array(ProviderFaultSchema).max(4096).default([]),
    failedAt: TimestampSchema,
  }),
});

export const JobCancelled = defineEvent({
  type: 'job.cancelled',
  version: 1,
  subject: 'execution.job.cancelled.v1',
  stream: ExecutionStream.name,
  description:
    'The job stopped because its orchestrator cancelled it (before or after placement); final usage.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    usage: FinalUsage,
    cancelledAt: TimestampSchema,
  }),
});

/** Upcasters of the job-lifecycle messages, for registries that hold older versions. */
export const jobUpcasters = [jobSubmittedV1ToV2] as const;

/** Every job-lifecycle message, for registries (pass `jobUpcasters` too). */
export const jobMessages = [
  JobSubmittedV1,
  JobSubmitted,
  UsageReported,
  JobCompleted,
  JobFailed,
  JobCancelled,
] as const;
