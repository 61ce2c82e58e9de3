import type { FastifyReply } from 'fastify';
import type { StoredResponse } from '../idempotency.store';

/** Sends a (possibly replayed) POST response; a replay says so in `Idempotent-Replayed`. */
export const sendStored = (reply: FastifyReply, response: StoredResponse, location?: string): unknown => {
  reply.status(response.status);
  if (response.replayed) reply.header('idempotent-replayed', 'true');
  if (location) reply.header('location', location);
  return response.body;
};
