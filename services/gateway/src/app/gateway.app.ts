import 'reflect-metadata';
import {
  createMetricsRegistry,
  defineCounter,
  defineGauge,
  defineHistogram,
  type Logger,
  type Registry,
} from '@gpunet/telemetry';
import { NestPinoLogger } from '@gpunet/service-runtime';
import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitedError, UnauthenticatedError } from '../domain/gateway.errors';
import { PROBLEM_CONTENT_TYPE, toProblem } from '../domain/problem';
import { type BucketState, takeToken } from '../domain/token-bucket';
import type { GatewayConfig } from './gateway.config';
import { GatewayRuntime } from './gateway.runtime';
import { AdminController } from './http/admin.controller';
import { JobsController } from './http/jobs.controller';
import { MarketController } from './http/market.controller';
import { ProblemFilter, sendProblem } from './http/problem.filter';
import type { GatewayRequest } from './http/request-context';
import { StreamRegistry } from './http/sse';
import { SystemController } from './http/system.controller';
import { GATEWAY_RUNTIME, JOBS_SERVICE, MARKET_SERVICE, METRICS_REGISTRY, STREAMS } from './http/tokens';
import { installTracing } from './http/tracing.hooks';
import { JobsService } from './jobs.service';
import { MarketService } from './market.service';

/** Content types whose bodies the gateway reads, as text: each route parses its own (specs need the text). */
export const BODY_CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'text/x-yaml',
  'text/plain',
];

export interface GatewayAppOptions {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  /** Default: a fresh registry (tests). */
  readonly metrics?: Registry;
  /** The time of rate limiting (tests may pass a fake). Default `Date.now`. */
  readonly nowMs?: () => number;
}

export interface RunningGateway {
  readonly app: NestFastifyApplication;
  readonly runtime: GatewayRuntime;
  /** `http://host:port` the gateway listens on. */
  readonly url: string;
  close(): Promise<void>;
}

@Module({})
class GatewayHttpModule {
  static forRoot(runtime: GatewayRuntime, metrics: Registry, streams: StreamRegistry): DynamicModule {
    return {
      module: GatewayHttpModule,
      controllers: [SystemController, JobsController, MarketController, AdminController],
      providers: [
        { provide: GATEWAY_RUNTIME, useValue: runtime },
        { provide: METRICS_REGISTRY, useValue: metrics },
        { provide: STREAMS, useValue: streams },
        { provide: JOBS_SERVICE, useValue: new JobsService(runtime) },
        { provide: MARKET_SERVICE, useValue: new MarketService(runtime) },
      ],
    };
  }
}

const bearerOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
};

/** Authentication and the per-key rate limit for every `/v1` request, before its body is read. */
const installAuth = (fastify: FastifyInstance, runtime: GatewayRuntime, nowMs: () => number): void => {
  const buckets = new Map<string, BucketState>();
  const limits = { ratePerSecond: runtime.config.rateLimitPerSecond, burst: runtime.config.rateLimitBurst };
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
    const principal = presented === '' ? null : await runtime.keys.authenticate(presented);
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
 * Starts the gateway: its runtime (database, NATS, relay, consumers), then the REST API on Fastify
 * through Nest, listening on `config.host:config.port` (0: a free port).
 */
export const startGateway = async (options: GatewayAppOptions): Promise<RunningGateway> => {
  const { config, logger } = options;
  const metrics = options.metrics ?? createMetricsRegistry({ service: 'gateway' });
  const onError = (error: unknown, context: string) => logger.error({ err: error }, context);
  const runtime = await GatewayRuntime.create({ config, metrics, onError });
  const openStreams = defineGauge(metrics, {
    subsystem: 'gateway',
    name: 'open_streams',
    help: 'Server-sent event streams open now.',
  });
  const streams = new StreamRegistry(config.maxStreams, (n) => openStreams.set(n));
  let app: NestFastifyApplication | undefined;
  const logInternal = (error: unknown) => logger.error({ err: error }, 'request failed');
  try {
    const adapter = new FastifyAdapter({
      bodyLimit: config.bodyLimitBytes,
      trustProxy: false,
      // The router answers a malformed URL or an over-long parameter before any hook or handler.
      frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) =>
        sendProblem(error, request, reply, logInternal),
    });
    app = await NestFactory.create<NestFastifyApplication>(
      GatewayHttpModule.forRoot(runtime, metrics, streams),
      adapter,
      { bodyParser: false, logger: new NestPinoLogger(logger), abortOnError: false },
    );
    const fastify = app.getHttpAdapter().getInstance();
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser(BODY_CONTENT_TYPES, { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    // Fastify's errors (body parsing, limits, hooks) reach ProblemFilter through the error handler
    // Nest installs at init; the router's own (bad URL, long parameter) through `frameworkErrors`.
    // A few answers Fastify gives itself (414 for an over-long path parameter …) skip the error
    // handler: they are rewritten here, so that every error is problem+json.
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
    installTracing(fastify);
    installAuth(fastify, runtime, options.nowMs ?? Date.now);
    installMetrics(fastify, metrics);
    app.useGlobalFilters(new ProblemFilter(logInternal));
    await app.init();
    await runtime.start();
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app?.close().catch(() => undefined);
    await runtime.stop().catch(() => undefined);
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  let closing: Promise<void> | undefined;
  const running = app;
  return {
    app: running,
    runtime,
    url: `http://${host}:${port}`,
    close: () =>
      (closing ??= (async () => {
        streams.closeAll();
        await running.close();
        await runtime.stop();
      })()),
  };
};
