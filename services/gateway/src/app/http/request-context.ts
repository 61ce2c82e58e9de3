import type { FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthenticatedError } from '../../domain/gateway.errors';
import type { ApiPrincipal, ApiScope } from '../api-keys';

/** What the authentication hook attaches to a request. */
export interface GatewayRequest extends FastifyRequest {
  principal?: ApiPrincipal;
}

/** The caller, if its key has `scope`; 401 without a key, 403 without the scope. */
export const requireScope = (request: FastifyRequest, scope: ApiScope): ApiPrincipal => {
  const principal = (request as GatewayRequest).principal;
  if (!principal) throw new UnauthenticatedError('an API key is required: Authorization: Bearer <key>');
  if (!principal.scopes.includes(scope))
    throw new ForbiddenError(
      `this API key lacks the '${scope}' scope (it has ${principal.scopes.join(', ')})`,
    );
  return principal;
};

/** The Idempotency-Key header, if sent once. */
export const idempotencyKeyOf = (request: FastifyRequest): string | undefined => {
  const value = request.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
};

/** The body as the gateway's content-type parsers keep it: the raw text ('' without one). */
export const rawBodyOf = (request: FastifyRequest): string =>
  typeof request.body === 'string' ? request.body : '';

export const contentTypeOf = (request: FastifyRequest): string => request.headers['content-type'] ?? '';
