import {
  type Clock,
  createRegistry,
  DeadLettersStream,
  MessageDeadLettered,
  type MessageRegistry,
  providerCatalog,
  providerStreams,
} from '@gpunet/contracts';
import { EVENTING, EventingModule, type EventingRuntime } from '@gpunet/eventing';
import type { Registry } from '@gpunet/telemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { discoveryMigrations } from '../infra/discovery.migrations';
import { CandidatesHandler } from './candidates.handler';
import type { DiscoveryConfig } from './discovery.config';
import { discoveryMetrics } from './discovery.metrics';
import { DiscoveryService } from './discovery.service';
import { CANDIDATES, DISCOVERY, DISCOVERY_METRICS, HEARTBEATS, PROVIDER_COMMANDS } from './discovery.tokens';
import { EdgeReportsHandler } from './edge-reports.handler';
import { HeartbeatsHandler } from './heartbeats.handler';

export interface DiscoveryModuleOptions {
  readonly config: DiscoveryConfig;
  /** Liveness time; tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: Clock;
  /** The service's metrics registry (from `SERVICE_CONTEXT`). */
  readonly metrics: Registry;
  readonly onError?: (error: unknown, context: string) => void;
}

/** Every message discovery understands. */
export const discoveryRegistry = (): MessageRegistry =>
  createRegistry([MessageDeadLettered, ...providerCatalog]);

/**
 * Discovery: the provider registry and its inventory projection, liveness, and the candidate query.
 * Handlers: signed edge reports (durable), heartbeats and provider-change hints (core NATS), the
 * candidate query.
 */
@Module({})
export class DiscoveryModule {
  static forRoot(options: DiscoveryModuleOptions): DynamicModule {
    const { config } = options;
    return {
      module: DiscoveryModule,
      imports: [
        EventingModule.forService('discovery', config, {
          registry: discoveryRegistry(),
          streams: [DeadLettersStream, ...providerStreams],
          migrations: discoveryMigrations,
          metrics: options.metrics,
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
        }),
      ],
      controllers: [EdgeReportsHandler, HeartbeatsHandler, CandidatesHandler],
      providers: [
        { provide: DISCOVERY_METRICS, useValue: discoveryMetrics(options.metrics) },
        {
          provide: DISCOVERY,
          useFactory: (eventing: EventingRuntime, metrics: ReturnType<typeof discoveryMetrics>) =>
            new DiscoveryService(config, eventing, metrics),
          inject: [EVENTING, DISCOVERY_METRICS],
        },
        { provide: PROVIDER_COMMANDS, useFactory: (d: DiscoveryService) => d.commands, inject: [DISCOVERY] },
        { provide: CANDIDATES, useFactory: (d: DiscoveryService) => d.candidates, inject: [DISCOVERY] },
        { provide: HEARTBEATS, useFactory: (d: DiscoveryService) => d.ingest, inject: [DISCOVERY] },
      ],
      exports: [DISCOVERY],
    };
  }
}
