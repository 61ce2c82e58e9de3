import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import type { HttpServing, ServiceContext } from '@gpunet/service-runtime';
import { defineCounter, defineHistogram, type Registry } from '@gpunet/telemetry';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitedError, UnauthenticatedError } from '../domain/gateway.errors';
import { PROBLEM_CONTENT_TYPE, toProblem } from '../domain/problem';
import { type BucketState, takeToken } from '../domain/token-bucket';
import type { ApiKeyStore } from './api-keys';
import type { GatewayConfig } from './gateway.config';
import { API_KEYS } from './gateway.tokens';
import { ProblemFilter, sendProblem } from './http/problem.filter';
import type { GatewayRequest } from './http/request-context';
import { installTracing } from './http/tracing.hooks';

/** Content types whose bodies the gateway reads, as text: each route parses its own (specs need the text). */
export const BODY_CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'text/x-yaml',
  'text/plain',
];

const bearerOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
};

/** Authentication and the per-key rate limit for every `/v1` request, before its body is read. */
const installAuth = (
  fastify: FastifyInstance,
  keys: ApiKeyStore,
  limits: { readonly ratePerSecond: number; readonly burst: number },
  nowMs: () => number,
): void => {
  const buckets = new Map<string, BucketState>();
  // Failed authentications are limited per client address with the same bucket, so that guessing
  // keys or flooding without one costs the database little. Bounded: the map is reset when large.
  const failures = new Map<string, BucketState>();
  const failed = (request: FastifyRequest, message: string): never => {
    if (failures.size > 100_000) failures.clear();
    const taken = takeToken(failures.get(request.ip), limits, nowMs());
    failures.set(request.ip, taken.state);
    if (!taken.ok) throw new RateLimitedError(taken.retryAfterSeconds);
    throw new UnauthenticatedError(message);
  };
  fastify.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/v1/') && request.url !== '/v1') return;
    const blocked = failures.get(request.ip);
    if (blocked && !takeToken(blocked, limits, nowMs()).ok)
      failed(request, 'too many failed authentications');
    const presented = bearerOf(request);
    if (presented === undefined)
      return failed(request, 'an API key is required: Authorization: Bearer <key>');
    const principal = presented === '' ? null : await keys.authenticate(presented);
    if (!principal) return failed(request, 'the API key is invalid or revoked');
    const taken = takeToken(buckets.get(principal.keyId), limits, nowMs());
    buckets.set(principal.keyId, taken.state);
    if (!taken.ok) throw new RateLimitedError(taken.retryAfterSeconds);
    (request as GatewayRequest).principal = principal;
  });
};

const installMetrics = (fastify: FastifyInstance, metrics: Registry): void => {
  const requests = defineCounter(metrics, {
    subsystem: 'gateway',
    name: 'http_requests',
    help: 'HTTP requests by route, method and status.',
    labelNames: ['route', 'method', 'status'],
  });
  const duration = defineHistogram(metrics, {
    subsystem: 'gateway',
    name: 'http_request_duration',
    unit: 'seconds',
    help: 'Time to the response head, by route and method.',
    labelNames: ['route', 'method'],
  });
  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    duration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
  });
};

/**
 * A few answers Fastify gives itself (414 for an over-long path parameter …) skip the error
 * handler: they are rewritten here, so that every error is problem+json.
 */
const installProblemBodies = (fastify: FastifyInstance): void => {
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith(PROBLEM_CONTENT_TYPE)) return payload;
    let message: string;
    try {
      // Fastify's own error bodies: { statusCode, code, error, message }.
      const parsed = JSON.parse(payload) as { statusCode?: unknown; message?: unknown };
      if (typeof parsed.statusCode !== 'number') return payload;
      message = typeof parsed.message === 'string' ? parsed.message : `HTTP ${reply.statusCode}`;
    } catch {
      return payload;
    }
    void reply.header('content-type', PROBLEM_CONTENT_TYPE);
    return JSON.stringify(
      toProblem({ statusCode: reply.statusCode, message }, request.url.split('?')[0] ?? '/'),
    );
  });
};

/**
 * The REST API on Fastify through Nest, listening on `config.host:config.port` (0: a free port):
 * text body parsers and limits, a server span per request, authentication and rate limits, request
 * metrics and problem+json for every error (`ProblemFilter`, HTTP only).
 */
export const gatewayHttp = (config: GatewayConfig, { logger, metrics }: ServiceContext): HttpServing => {
  const logInternal = (error: unknown) => logger.error({ err: error }, 'request failed');
  return {
    adapter: new FastifyAdapter({
      bodyLimit: config.bodyLimitBytes,
      trustProxy: false,
      // The router answers a malformed URL or an over-long parameter before any hook or handler.
      frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) =>
        sendProblem(error, request, reply, logInternal),
    }),
    port: config.port,
    host: config.host,
    options: { bodyParser: false },
    configure: (app) => {
      const fastify = (app as NestFastifyApplication).getHttpAdapter().getInstance();
      fastify.removeAllContentTypeParsers();
      fastify.addContentTypeParser(BODY_CONTENT_TYPES, { parseAs: 'string' }, (_request, body, done) =>
        done(null, body),
      );
      // Fastify's errors (body parsing, limits, hooks) reach ProblemFilter through the error handler
      // Nest installs at init; the router's own (bad URL, long parameter) through `frameworkErrors`.
      installProblemBodies(fastify);
      installTracing(fastify);
      const { clock } = app.get<EventingRuntime>(EVENTING);
      installAuth(
        fastify,
        app.get<ApiKeyStore>(API_KEYS),
        { ratePerSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst },
        () => clock.now().getTime(),
      );
      installMetrics(fastify, metrics);
      app.useGlobalFilters(new ProblemFilter(logInternal));
    },
  };
};
