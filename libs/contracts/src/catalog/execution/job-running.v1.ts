import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';

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
