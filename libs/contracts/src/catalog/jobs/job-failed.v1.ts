import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';
import { ProviderFaultSchema } from './provider-fault.schemas';
import { FinalUsageSchema } from './provider-usage.schemas';

export const JobFailed = defineEvent({
  type: 'job.failed',
  version: 1,
  subject: 'execution.job.failed.v1',
  stream: ExecutionStream.name,
  description: 'The job failed for good; carries the final usage and the providers at fault, if any.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    reason: z.strictObject({ code: z.string().min(1).max(128), message: z.string().max(4096) }),
    usage: FinalUsageSchema,
    faults: z.array(ProviderFaultSchema).max(4096).default([]),
    failedAt: TimestampSchema,
  }),
});
