import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, EntityIdSchema, UtcTimestampSchema } from '../primitives';
import { ExecutionStream } from '../streams';

/**
 * An edge claimed more wall seconds for a rank than execution observed on its own clock (from the
 * rank first seen running to its exit seen, or its last status seen), beyond the tolerance.
 * Execution pays `paidSeconds` (the observed figure) for the rank; `usage.reported` and the job's
 * end carry the paid figures.
 */
export const UsageDisputed = defineEvent({
  type: 'usage.disputed',
  version: 1,
  subject: 'execution.usage.disputed.v1',
  stream: ExecutionStream.name,
  description:
    "An edge's signed usage for a rank exceeded what execution observed; the observed figure is paid.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    providerId: EdgeIdSchema,
    attempt: z.int().min(1),
    rank: z.int().min(0),
    /** Wall seconds the edge signed for the rank. */
    edgeSeconds: z.number().min(0),
    /** Wall seconds execution observed for the rank. */
    observedSeconds: z.number().min(0),
    /** Wall seconds paid for the rank. */
    paidSeconds: z.number().min(0),
    at: UtcTimestampSchema,
  }),
});
