import type { FastifyReply } from 'fastify';
import type { StoredResponse } from '../idempotency.store';

/**
 * Sends a (possibly replayed) POST response; a replay says so in `Idempotent-Replayed`, and
 * `X-Correlation-Id` names the chain the (first) request started.
 */
export const sendStored = (reply: FastifyReply, response: StoredResponse, location?: string): unknown => {
  reply.status(response.status);
  if (response.replayed) reply.header('idempotent-replayed', 'true');
  if (response.correlationId !== undefined) reply.header('x-correlation-id', response.correlationId);
  if (location) reply.header('location', location);
  return response.body;
};
