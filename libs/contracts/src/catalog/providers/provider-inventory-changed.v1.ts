import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { DiscoveryStream } from '../streams';
import { HostSchema } from './host.schemas';
import { InventorySchema } from './inventory.schemas';
import { ReportSequenceSchema } from './providers.schemas';

export const ProviderInventoryChanged = defineEvent({
  type: 'provider.inventory-changed',
  version: 1,
  subject: 'discovery.provider.inventory-changed.v1',
  stream: DiscoveryStream.name,
  description: "A provider's hardware differs from what was known.",
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    sequence: ReportSequenceSchema,
    at: UtcTimestampSchema,
    host: HostSchema,
    inventory: InventorySchema,
  }),
});
