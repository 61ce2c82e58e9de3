import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';
import { ProviderUsageSchema } from './provider-usage.schemas';

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
