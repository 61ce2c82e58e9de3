import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';

/** The orchestrator asked to cancel a job (at any stage). Execution stops its ranks and cancels it. */
export const JobCancelRequested = defineEvent({
  type: 'job.cancel-requested',
  version: 1,
  subject: 'gateway.job.cancel-requested.v1',
  stream: GatewayStream.name,
  description: 'An orchestrator asked to cancel a job; execution stops its ranks and emits job.cancelled.',
  schema: z.strictObject({
    jobId: EntityIdSchema,
    tenantId: EntityIdSchema,
    reason: z.string().max(1024).nullable(),
    requestedAt: TimestampSchema,
  }),
});
