import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, text, UtcTimestampSchema } from '../primitives';
import { DiscoveryStream } from '../streams';
import { HostSchema } from './host.schemas';
import { InventorySchema } from './inventory.schemas';
import { PolicySummarySchema } from './policy.schemas';
import { ReportSequenceSchema } from './providers.schemas';

export const ProviderRegistered = defineEvent({
  type: 'provider.registered',
  version: 1,
  subject: 'discovery.provider.registered.v1',
  stream: DiscoveryStream.name,
  description: 'A provider edge joined the network with a verified identity.',
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    sequence: ReportSequenceSchema,
    publicKey: EdgeIdSchema,
    name: text(64),
    agentVersion: text(32),
    at: UtcTimestampSchema,
    host: HostSchema,
    inventory: InventorySchema,
    policy: PolicySummarySchema,
  }),
});
