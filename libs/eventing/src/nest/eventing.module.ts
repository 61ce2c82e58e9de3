import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DirectHandlers } from './direct-handlers';
import { type EventingOptions, EventingRuntime } from './eventing.runtime';
import { EVENTING } from './eventing.tokens';

export { EVENTING };

/** Where a service's state and messages live, as every service's configuration names them. */
export interface ServiceConnection {
  readonly databaseUrl: string;
  /** The service's own Postgres schema. */
  readonly schema: string;
  readonly natsUrl: string;
  /** The service's NATS user nkey seed (`SU…`); null: no credentials (development server). */
  readonly natsSeed: string | null;
  /** Subject/stream namespace (tests); '' in production. */
  readonly prefix: string;
}

/** What a service adds to its connection: its messages, streams, tables and helpers. */
export type EventingParts = Omit<EventingOptions, 'service' | 'database' | 'nats' | 'prefix'> & {
  readonly migrations?: EventingOptions['database']['migrations'];
  readonly entities?: EventingOptions['database']['entities'];
  readonly poolSize?: number;
};

/**
 * The service's eventing as a global Nest module: `EventingRuntime` (database, NATS with the
 * service's credentials, streams, outbox relay, envelopes, client) under `EVENTING`. Boot the
 * service with `runService` (`@gpunet/service-runtime`), which serves its `@EventPattern` and
 * `@MessagePattern` controllers on it through the JetStream transport.
 */
@Module({})
export class EventingModule {
  static forRoot(options: EventingOptions): DynamicModule {
    return {
      module: EventingModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [{ provide: EVENTING, useFactory: () => EventingRuntime.open(options) }, DirectHandlers],
      exports: [EVENTING],
    };
  }

  /** `forRoot` for a service configured the usual way (`ServiceConnection`). */
  static forService(service: string, connection: ServiceConnection, parts: EventingParts): DynamicModule {
    const { migrations, entities, poolSize, ...rest } = parts;
    return EventingModule.forRoot({
      ...rest,
      service,
      database: {
        url: connection.databaseUrl,
        schema: connection.schema,
        ...(migrations ? { migrations } : {}),
        ...(entities ? { entities } : {}),
        ...(poolSize ? { poolSize } : {}),
      },
      nats: { servers: connection.natsUrl, seed: connection.natsSeed },
      prefix: connection.prefix,
    });
  }
}
