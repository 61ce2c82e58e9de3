import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { EdgeLivenessStream } from '../streams';

/**
 * Liveness, every few seconds, on core NATS (also kept a minute in `EDGE_LIVENESS`). Not signed: the
 * server's permissions let only this edge's credentials publish on its subject. Discovery measures
 * silence with its own clock; `sentAt` is informational.
 */
export const EdgeHeartbeat = defineEvent({
  type: 'edge.heartbeat',
  version: 1,
  subject: 'edge.{edgeId}.heartbeat.v1',
  stream: EdgeLivenessStream.name,
  description: 'An edge is alive; carries the digest of the inventory it last reported.',
  schema: z.strictObject({
    edgeId: EdgeIdSchema,
    sequence: z.int().min(1),
    sentAt: UtcTimestampSchema,
    /** sha256 (hex) of the canonical inventory last reported. */
    inventoryDigest: z.string().regex(/^[0-9a-f]{64}$/),
  }),
});
