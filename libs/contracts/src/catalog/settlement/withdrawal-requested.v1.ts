import { z } from 'zod';
import { defineEvent } from '../../message';
import { AssetSchema, EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { GatewayStream } from '../streams';
import { WithdrawalSourceSchema } from './withdrawal.schemas';

export const WithdrawalRequested = defineEvent({
  type: 'withdrawal.requested',
  version: 1,
  subject: 'gateway.withdrawal.requested.v1',
  stream: GatewayStream.name,
  description: 'An owner asked to move funds out to a chain address.',
  schema: z.strictObject({
    withdrawalId: EntityIdSchema,
    ownerId: EntityIdSchema,
    source: WithdrawalSourceSchema,
    asset: AssetSchema,
    amount: MinorUnitsSchema,
    /** The chain address (Cardano: bech32). */
    destination: z.string().min(1).max(256),
    requestedAt: TimestampSchema,
  }),
});
