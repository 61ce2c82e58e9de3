import { z } from 'zod';
import { defineEvent } from '../../message';
import { signedEdgeReportFields } from '../primitives';
import { EdgeStream } from '../streams';
import { PolicySummarySchema } from './policy.schemas';

export const EdgePolicyReported = defineEvent({
  type: 'edge.policy-reported',
  version: 1,
  subject: 'edge.{edgeId}.policy-reported.v1',
  stream: EdgeStream.name,
  description: 'The provider changed what the edge shares. Signed.',
  schema: z.strictObject({ ...signedEdgeReportFields, policy: PolicySummarySchema }),
});
