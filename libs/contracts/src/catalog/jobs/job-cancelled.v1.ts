import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';
import { FinalUsageSchema } from './provider-usage.schemas';

export const JobCancelled = defineEvent({
  type: 'job.cancelled',
  version: 1,
  subject: 'execution.job.cancelled.v1',
  stream: ExecutionStream.name,
  description:
    'The job stopped because its orchestrator cancelled it (before or after placement); final usage.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    usage: FinalUsageSchema,
    cancelledAt: TimestampSchema,
  }),
});
