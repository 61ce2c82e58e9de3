import 'reflect-metadata';
import type { Server } from 'node:net';
import {
  createLogger,
  createMetricsRegistry,
  initTelemetry,
  type Logger,
  type MetricsServer,
  type Registry,
  startMetricsServer,
  type Telemetry,
} from '@gpunet/telemetry';
import {
  EVENTING,
  type EventingRuntime,
  JetStreamTransport,
  type JetStreamTransportOptions,
  RethrowRpcFilter,
} from '@gpunet/eventing';
import {
  type DynamicModule,
  type INestApplication,
  type INestApplicationContext,
  type INestMicroservice,
  Module,
  type NestApplicationOptions,
  type Type,
} from '@nestjs/common';
import { type AbstractHttpAdapter, NestFactory } from '@nestjs/core';
import type { NestMicroservice } from '@nestjs/microservices';
import { InvalidConfigError } from './config';
import { NestPinoLogger } from './nest-logger';

/** Injection token of the running service's `ServiceContext`. */
export const SERVICE_CONTEXT = Symbol('gpunet.service-context');

/** What every part of a service shares: its name, logger, metrics registry and tracer. */
export interface ServiceContext {
  readonly name: string;
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly telemetry: Telemetry;
}

/** An HTTP API the service serves itself (the gateway), beside the JetStream transport. */
export interface HttpServing {
  /** The HTTP platform, configured (e.g. `new FastifyAdapter({ bodyLimit })`). */
  readonly adapter: AbstractHttpAdapter;
  /** Port to listen on; 0 picks a free one (`RunningService.url` says which). */
  readonly port: number;
  /** Address to listen on. Default `0.0.0.0`. */
  readonly host?: string;
  /** Nest's application options (e.g. `bodyParser: false`); the logger is the service's. */
  readonly options?: Omit<NestApplicationOptions, 'logger' | 'abortOnError'>;
  /**
   * Called with the created application before its lifecycle hooks run: global filters, pipes and
   * hooks on the adapter's server. They apply to HTTP only; the transport keeps `RethrowRpcFilter`.
   */
  readonly configure?: (app: INestApplication, context: ServiceContext) => void | Promise<void>;
}

export interface RunServiceOptions {
  /** Service name: `service.name` of its spans, `service` of its log lines and metrics. */
  readonly name: string;
  readonly version?: string;
  /** The root module, built with the context (so that it can hand the registry to EventingModule). */
  readonly module: (context: ServiceContext) => Type<unknown> | DynamicModule;
  /**
   * Port of `/metrics` and `/healthz`. Default: `METRICS_PORT` from the environment; when neither is
   * set, no endpoint is served. 0 picks a free port.
   */
  readonly metricsPort?: number;
  /**
   * The service owns the process: SIGTERM/SIGINT close it gracefully, and a failed start ends the
   * process (exit code 1) once it is logged. Default true; tests pass false (a failed start rejects).
   */
  readonly handleSignals?: boolean;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A logger to use instead of one on stdout (tests pass one writing to memory). */
  readonly logger?: Logger;
  /**
   * Serve the module's `@EventPattern` and `@MessagePattern` controllers on the JetStream
   * transport, over the `EventingRuntime` the module provides (`EventingModule`, under
   * `EVENTING`), with these options. Default: on. `false`: a plain application context (a service
   * without eventing, such as the relay).
   */
  readonly transport?: JetStreamTransportOptions | false;
  /**
   * Serve the module's HTTP controllers too: a hybrid application, the transport connected to the
   * HTTP application with its own configuration. Listens once the hooks have run and the transport
   * serves; the "started" log line gives its `url`. A function gets the service's context (its
   * logger, for the adapter's error handling). Default: no HTTP (a plain microservice).
   */
  readonly http?: HttpServing | ((context: ServiceContext) => HttpServing);
}

@Module({})
class ServiceRootModule {}

export interface RunningService {
  readonly context: ServiceContext;
  readonly app: INestApplicationContext;
  /** The JetStream transport serving the handlers (absent with `transport: false`). */
  readonly transport: JetStreamTransport | undefined;
  /** The bound metrics port, when an endpoint is served. */
  readonly metricsPort: number | undefined;
  /** `http://host:port` of the HTTP API, when `http` is served (`0.0.0.0` reads as `127.0.0.1`). */
  readonly url: string | undefined;
  /** Stops the application (consumers finish their batch), the metrics endpoint and telemetry. Idempotent. */
  close(): Promise<void>;
}

/** The levels `LOG_LEVEL` may name, lowest first. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** `LOG_LEVEL`, one of `LOG_LEVELS` (unset: undefined); anything else refuses to start, naming it. */
const logLevelOf = (service: string, value: string | undefined): (typeof LOG_LEVELS)[number] | undefined => {
  if (value === undefined || value.trim() === '') return undefined;
  const level = LOG_LEVELS.find((l) => l === value.trim().toLowerCase());
  if (level === undefined)
    throw new InvalidConfigError(service, [
      { path: 'LOG_LEVEL', message: `must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(value)}` },
    ]);
  return level;
};

/**
 * Boots a gpunet service: telemetry, JSON logger, metrics registry and endpoint, the Nest
 * application with lifecycle hooks, and a graceful shutdown on SIGTERM/SIGINT. A service's
 * `main.ts` is one call to this.
 */
export const runService = async (options: RunServiceOptions): Promise<RunningService> => {
  const env = options.env ?? process.env;
  // A logger passed in (tests) gets LOG_LEVEL only when it is set.
  const loggerFor = (level: (typeof LOG_LEVELS)[number] | undefined): Logger =>
    options.logger
      ? level === undefined
        ? options.logger
        : options.logger.child({}, { level })
      : createLogger({
          service: options.name,
          level: level ?? 'info',
          ...(options.version ? { version: options.version } : {}),
        });
  let level: (typeof LOG_LEVELS)[number] | undefined;
  try {
    level = logLevelOf(options.name, env['LOG_LEVEL']);
  } catch (error) {
    loggerFor(undefined).fatal({ err: error }, `${options.name} failed to start`);
    throw error;
  }
  const telemetry = initTelemetry({
    serviceName: options.name,
    ...(options.version ? { serviceVersion: options.version } : {}),
  });
  const logger = loggerFor(level);
  const metrics = createMetricsRegistry({ service: options.name });
  const context: ServiceContext = { name: options.name, logger, metrics, telemetry };

  let app: INestApplicationContext | undefined;
  let transport: JetStreamTransport | undefined;
  let eventingRuntime: EventingRuntime | undefined;
  let ready = false;
  let metricsServer: MetricsServer | undefined;
  let url: string | undefined;
  try {
    // The context is a global provider, so any provider can `@Inject(SERVICE_CONTEXT)`.
    const root: DynamicModule = {
      module: ServiceRootModule,
      global: true,
      imports: [options.module(context)],
      providers: [{ provide: SERVICE_CONTEXT, useValue: context }],
      exports: [SERVICE_CONTEXT],
    };
    // abortOnError false: a failed start is reported and rethrown, not a process.abort().
    const nestOptions = { logger: new NestPinoLogger(logger), abortOnError: false };
    if (options.http) {
      const http = typeof options.http === 'function' ? options.http(context) : options.http;
      const web = await NestFactory.create<INestApplication>(root, http.adapter, {
        ...http.options,
        ...nestOptions,
      });
      app = web;
      if (options.transport !== false) {
        eventingRuntime = web.get<EventingRuntime>(EVENTING);
        transport = new JetStreamTransport(eventingRuntime, options.transport ?? {});
        // Its own configuration (the HTTP filters are not the transport's), and its handlers bound
        // at `startAllMicroservices` rather than now, so that RethrowRpcFilter applies to them.
        const microservice = web.connectMicroservice(
          { strategy: transport },
          { inheritAppConfig: false, deferInitialization: true },
        );
        microservice.useGlobalFilters(new RethrowRpcFilter());
        // The application runs the lifecycle hooks (init); the microservice must not run them again.
        (microservice as NestMicroservice).setIsInitHookCalled(true);
      }
      await http.configure?.(web, context);
      // Hooks (init, bootstrap), then the consumers and queries, then HTTP requests.
      await web.init();
      await web.startAllMicroservices();
      await web.listen(http.port, http.host ?? '0.0.0.0');
      const address = (web.getHttpServer() as Server).address();
      const port = typeof address === 'object' && address !== null ? address.port : http.port;
      const host = (http.host ?? '0.0.0.0') === '0.0.0.0' ? '127.0.0.1' : http.host;
      url = `http://${host}:${port}`;
    } else if (options.transport === false) {
      app = await NestFactory.createApplicationContext(root, nestOptions);
      await app.init();
    } else {
      const transportOptions = options.transport ?? {};
      const microservice: INestMicroservice = await NestFactory.createMicroservice(root, {
        ...nestOptions,
        inject: [EVENTING],
        useFactory: (eventing: EventingRuntime) => {
          transport = new JetStreamTransport(eventing, transportOptions);
          eventingRuntime = eventing;
          return { strategy: transport };
        },
      });
      app = microservice;
      // Nest's own start-up lines go through the JSON logger too (without this, its "microservice
      // successfully started" is printed by a console logger of its own, whatever `logger` says).
      microservice.useLogger(nestOptions.logger);
      // A handler's error reaches the transport as thrown: it retries or dead-letters by its type.
      microservice.useGlobalFilters(new RethrowRpcFilter());
      // Lifecycle hooks (init, bootstrap) first, then the consumers and queries.
      await microservice.listen();
    }
    const port = options.metricsPort ?? (env['METRICS_PORT'] ? Number(env['METRICS_PORT']) : undefined);
    if (port !== undefined) {
      if (!Number.isInteger(port) || port < 0 || port > 65_535)
        throw new Error(`METRICS_PORT must be a port number, not ${String(port)}`);
      metricsServer = await startMetricsServer({
        port,
        registry: metrics,
        // Alive and able to work: started, and (with eventing) Postgres and NATS answer.
        health: async () => {
          if (!ready) return false;
          if (!eventingRuntime) return true;
          const { database, nats } = await eventingRuntime.health();
          return database && nats;
        },
      });
    }
  } catch (error) {
    logger.fatal({ err: error }, `${options.name} failed to start`);
    await app?.close().catch(() => undefined);
    await eventingRuntime?.close().catch(() => undefined);
    await telemetry.shutdown();
    // A process that owns its signals is the service: it ends, rather than live on with whatever a
    // half-built application left open (a pool, a NATS connection) and nothing serving.
    if (options.handleSignals ?? true) {
      logger.flush();
      process.exit(1);
    }
    throw error;
  }
  ready = true;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      ready = false;
      logger.info(`${options.name} stopping`);
      await app.close();
      await metricsServer?.close();
      await telemetry.shutdown();
      logger.info(`${options.name} stopped`);
      logger.flush();
    })());

  if (options.handleSignals ?? true) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.info({ signal }, 'shutdown requested');
        close().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.fatal({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      });
    }
  }
  logger.info({ metricsPort: metricsServer?.port, url }, `${options.name} started`);
  return { context, app, transport, metricsPort: metricsServer?.port, url, close };
};
