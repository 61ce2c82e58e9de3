import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { SchedulerStream } from '../streams';

/** A job entered the queue (funded, or back after a failed reservation round). */
export const JobQueued = defineEvent({
  type: 'job.queued',
  version: 1,
  subject: 'scheduler.job.queued.v1',
  stream: SchedulerStream.name,
  description: 'A job waits for capacity; it is retried on capacity events, fairly across tenants.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    /** 1 for the first round; grows with every requeue. */
    attempt: z.int().min(1),
    /** Why it waits (the last round's outcome), for people; null when just funded. */
    reason: z.string().max(1024).nullable(),
    at: UtcTimestampSchema,
  }),
});
