import { z } from 'zod';
import { defineEvent } from '../../message';
import { signedEdgeReportFields } from '../primitives';
import { EdgeStream } from '../streams';
import { HostSchema } from './host.schemas';
import { InventorySchema } from './inventory.schemas';

export const EdgeInventoryReported = defineEvent({
  type: 'edge.inventory-reported',
  version: 1,
  subject: 'edge.{edgeId}.inventory-reported.v1',
  stream: EdgeStream.name,
  description: "An edge's hardware changed (a GPU appeared, vanished or changed). Signed.",
  schema: z.strictObject({ ...signedEdgeReportFields, host: HostSchema, inventory: InventorySchema }),
});
