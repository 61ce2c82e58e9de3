import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';
import { ProviderFaultSchema } from './provider-fault.schemas';
import { FinalUsageSchema } from './provider-usage.schemas';

export const JobCompleted = defineEvent({
  type: 'job.completed',
  version: 1,
  subject: 'execution.job.completed.v1',
  stream: ExecutionStream.name,
  description: 'Every rank exited successfully; carries the final usage per provider.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    usage: FinalUsageSchema,
    /** Providers that faulted but were recovered from (the job still completed). */
    faults: z.array(ProviderFaultSchema).max(4096).default([]),
    completedAt: TimestampSchema,
  }),
});
