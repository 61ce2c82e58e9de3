import { z } from 'zod';
import { defineEvent } from '../../message';
import { signedEdgeReportFields, UtcTimestampSchema } from '../primitives';
import { EdgeBenchmarkStream } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';
import { LinkProbeResultSchema } from './link-probe.schemas';

export const EdgeLinksProbed = defineEvent({
  type: 'edge.links-probed',
  version: 1,
  subject: 'edge.{edgeId}.links-probed.v1',
  stream: EdgeBenchmarkStream.name,
  description: 'An edge measured the links to the peers it was asked to probe. Signed.',
  schema: z.strictObject({
    ...signedEdgeReportFields,
    requestId: RequestIdSchema,
    probedAt: UtcTimestampSchema,
    results: z.array(LinkProbeResultSchema).max(64),
  }),
});
