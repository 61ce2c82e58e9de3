import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';

/** A rank exited (any code). Execution decides the gang's fate from these. */
export const RankExited = defineEvent({
  type: 'rank.exited',
  version: 1,
  subject: 'execution.rank.exited.v1',
  stream: ExecutionStream.name,
  description: 'A rank of the gang exited with a code or a signal, as its edge reported it.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    providerId: EdgeIdSchema,
    exitCode: z.int().nullable(),
    signal: z.string().max(32).nullable(),
    wallSeconds: z.number().min(0),
    at: UtcTimestampSchema,
  }),
});
