import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, text, UtcTimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';

/** The gang is restarted after a failure (policy `restart_all`), as attempt `attempt`. */
export const JobRestarting = defineEvent({
  type: 'job.restarting',
  version: 1,
  subject: 'execution.job.restarting.v1',
  stream: ExecutionStream.name,
  description: 'A rank failed; every rank is stopped and the gang starts again as the next attempt.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    /** The attempt about to start. */
    attempt: z.int().min(2),
    reason: z.strictObject({ code: text(128), message: z.string().max(4096) }),
    at: UtcTimestampSchema,
  }),
});
