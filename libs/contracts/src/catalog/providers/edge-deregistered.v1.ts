import { z } from 'zod';
import { defineEvent } from '../../message';
import { signedEdgeReportFields } from '../primitives';
import { EdgeStream } from '../streams';

export const EdgeDeregistered = defineEvent({
  type: 'edge.deregistered',
  version: 1,
  subject: 'edge.{edgeId}.deregistered.v1',
  stream: EdgeStream.name,
  description: 'The provider took the edge out of the network. Signed.',
  schema: z.strictObject({ ...signedEdgeReportFields, reason: z.string().max(256) }),
});
