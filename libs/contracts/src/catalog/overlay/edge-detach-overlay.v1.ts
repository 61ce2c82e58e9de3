import { z } from 'zod';
import { defineCommand } from '../../message';
import { EntityIdSchema } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';

export const DetachOverlay = defineCommand({
  type: 'edge.detach-overlay',
  version: 1,
  subject: 'cmd.edge.{edgeId}.detach-overlay.v1',
  stream: CORE_REQUEST_REPLY,
  description: "Remove the job's interface and relay connection from the host (idempotent).",
  schema: z.strictObject({ jobId: EntityIdSchema }),
});
