import type { Clock } from '@gpunet/contracts';
import { EVENTING, EventingModule, type EventingRuntime } from '@gpunet/eventing';
import type { ServiceContext } from '@gpunet/service-runtime';
import { defineGauge } from '@gpunet/telemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { ApiKeysRepository } from '../infra/api-keys.repository';
import { gatewayMigrations } from '../infra/gateway.migrations';
import { IdempotencyRepository } from '../infra/idempotency.repository';
import { JobsProjection } from '../infra/jobs.projection';
import { ApiKeyStore } from './api-keys';
import type { GatewayConfig } from './gateway.config';
import { GatewayLifecycle } from './gateway.lifecycle';
import { GATEWAY_STREAMS, gatewayRegistry } from './gateway.messages';
import {
  API_KEYS,
  GATEWAY_CONFIG,
  IDEMPOTENCY,
  JOB_STREAMS,
  JOBS_PROJECTION,
  JOBS_SERVICE,
  MARKET_SERVICE,
  METRICS_REGISTRY,
  STREAMS,
  UPSTREAM,
} from './gateway.tokens';
import { AdminController } from './http/admin.controller';
import { JobsController } from './http/jobs.controller';
import { MarketController } from './http/market.controller';
import { JobStreams, StreamRegistry } from './http/sse';
import { SystemController } from './http/system.controller';
import { IdempotencyStore } from './idempotency.store';
import { JobsProjectionHandler } from './jobs-projection.handler';
import { JobsService } from './jobs.service';
import { MarketService } from './market.service';
import { Upstream } from './upstream';

export interface GatewayModuleOptions {
  /** The time of events, decisions and rate limits. Default: the system clock. */
  readonly clock?: Clock;
}

/**
 * The gateway: its REST API (the HTTP controllers, served by `gatewayHttp`), the jobs projection's
 * consumers (on the JetStream transport) and, under both, its eventing: database (event store,
 * outbox, inbox, API keys, idempotency, jobs read model), NATS and the outbox relay that publishes
 * what people asked for on the GATEWAY stream.
 */
@Module({})
export class GatewayModule {
  static forRoot(
    config: GatewayConfig,
    context: ServiceContext,
    options: GatewayModuleOptions = {},
  ): DynamicModule {
    const { metrics, logger } = context;
    return {
      module: GatewayModule,
      imports: [
        EventingModule.forService('gateway', config, {
          registry: gatewayRegistry(),
          streams: GATEWAY_STREAMS,
          migrations: gatewayMigrations,
          metrics,
          onError: (error, where) => logger.error({ err: error }, where),
          ...(options.clock ? { clock: options.clock } : {}),
        }),
      ],
      controllers: [
        SystemController,
        JobsController,
        MarketController,
        AdminController,
        JobsProjectionHandler,
      ],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: METRICS_REGISTRY, useValue: metrics },
        {
          provide: JOBS_PROJECTION,
          inject: [EVENTING],
          useFactory: (eventing: EventingRuntime) => new JobsProjection(eventing.db),
        },
        {
          provide: API_KEYS,
          inject: [EVENTING],
          useFactory: (eventing: EventingRuntime) =>
            new ApiKeyStore(new ApiKeysRepository(eventing.db), {
              cacheTtlMs: config.keyCacheTtlMs,
              now: () => eventing.clock.now().getTime(),
            }),
        },
        {
          provide: IDEMPOTENCY,
          inject: [EVENTING],
          useFactory: (eventing: EventingRuntime) =>
            new IdempotencyStore(eventing.db, new IdempotencyRepository()),
        },
        {
          provide: STREAMS,
          useFactory: () => {
            const open = defineGauge(metrics, {
              subsystem: 'gateway',
              name: 'open_streams',
              help: 'Server-sent event streams open now.',
            });
            return new StreamRegistry(config.maxStreams, (n) => open.set(n));
          },
        },
        { provide: UPSTREAM, useClass: Upstream },
        { provide: JOBS_SERVICE, useClass: JobsService },
        { provide: MARKET_SERVICE, useClass: MarketService },
        { provide: JOB_STREAMS, useClass: JobStreams },
        GatewayLifecycle,
      ],
    };
  }
}
