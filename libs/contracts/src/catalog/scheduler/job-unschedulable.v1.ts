import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, text, UtcTimestampSchema } from '../primitives';
import { SchedulerStream } from '../streams';

/** A reason the scheduling core gave, as it gave it: plugin, code, sentence and GPU count. */
export const UnschedulableReasonSchema = z.strictObject({
  plugin: text(128),
  reason: text(128),
  message: z.string().max(1024),
  /** Free GPUs this filter ruled out first; null for reasons about the gang as a whole. */
  gpus: z.int().min(0).nullable(),
});

/** The job cannot run as asked; a person must change the job (or wait for the inventory). */
export const JobUnschedulable = defineEvent({
  type: 'job.unschedulable',
  version: 1,
  subject: 'scheduler.job.unschedulable.v1',
  stream: SchedulerStream.name,
  description:
    'The job cannot be placed as asked; carries the scheduling core’s sentence and reasons a person can act on.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    /** `UnschedulableAndUnresolvable`: no cluster state could hold it; `RetriesExhausted`: edges kept declining. */
    code: z.enum(['UnschedulableAndUnresolvable', 'Unschedulable', 'Error', 'RetriesExhausted']),
    allocation: z.string().max(128).nullable(),
    /** One sentence: "8 GPUs asked; 6 match ≥ 40 GB, in subnet 'ai'; …". */
    message: z.string().max(2048),
    reasons: z.array(UnschedulableReasonSchema).max(64),
    at: UtcTimestampSchema,
  }),
});
