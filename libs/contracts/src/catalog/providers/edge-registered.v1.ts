import { z } from 'zod';
import { defineEvent } from '../../message';
import { signedEdgeReportFields, text } from '../primitives';
import { EdgeStream } from '../streams';
import { HostSchema } from './host.schemas';
import { InventorySchema } from './inventory.schemas';
import { PolicySummarySchema } from './policy.schemas';

export const EdgeRegistered = defineEvent({
  type: 'edge.registered',
  version: 1,
  subject: 'edge.{edgeId}.registered.v1',
  stream: EdgeStream.name,
  description: 'An edge (re)joined the network: who it is, what it has and what it shares. Signed.',
  schema: z.strictObject({
    ...signedEdgeReportFields,
    /** A name the provider chose, for people. */
    name: text(64),
    agentVersion: text(32),
    host: HostSchema,
    inventory: InventorySchema,
    policy: PolicySummarySchema,
  }),
});
