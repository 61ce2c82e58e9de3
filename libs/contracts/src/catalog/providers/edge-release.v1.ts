import { z } from 'zod';
import { defineCommand } from '../../message';
import { text } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';

export const ReleaseOnEdge = defineCommand({
  type: 'edge.release',
  version: 1,
  subject: 'cmd.edge.{edgeId}.release.v1',
  stream: CORE_REQUEST_REPLY,
  description: 'Release a reservation. Idempotent: releasing an unknown one succeeds.',
  schema: z.strictObject({ reservationId: text(128), reason: z.string().max(256) }),
});

export const ReleaseReplySchema = z.strictObject({ reservationId: text(128), released: z.boolean() });
export type ReleaseReply = z.infer<typeof ReleaseReplySchema>;
