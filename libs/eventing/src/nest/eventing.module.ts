import type { MessageRegistry, StreamDefinition } from '@gpunet/contracts';
import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { connectNats, type NatsHandle, type NatsOptions } from '../jetstream/connection';
import { DurableConsumer, type DurableConsumerOptions } from '../jetstream/consumer';
import { ensureStreams } from '../jetstream/streams';
import { eventingMetrics } from '../metrics';
import { OutboxRelay } from '../outbox/outbox-relay';
import { Database, type DatabaseOptions } from '../postgres/database';
import { PostgresEventStore } from '../postgres/event-store';

/** Injection tokens. gpunet builds without decorator metadata, so every injection names its token. */
export const EVENTING_DATABASE = Symbol('gpunet.eventing.database');
export const EVENTING_NATS = Symbol('gpunet.eventing.nats');
export const EVENTING_EVENT_STORE = Symbol('gpunet.eventing.event-store');
export const EVENTING_REGISTRY = Symbol('gpunet.eventing.registry');
export const EVENTING_RUNTIME = Symbol('gpunet.eventing.runtime');

/** What a consumer needs beyond what the module already has. */
export type ConsumerSpec = Omit<
  DurableConsumerOptions,
  'db' | 'nc' | 'js' | 'jsm' | 'registry' | 'prefix' | 'metrics'
>;

export interface EventingModuleOptions {
  /** The service's name: NATS connection name, Postgres application name, log context. */
  readonly service: string;
  readonly database: Omit<DatabaseOptions, 'applicationName'>;
  /**
   * The NATS servers and, where the server requires it, this service's credentials (an nkey or JWT
   * authenticator: each service has its own user, see deploy/nats).
   */
  readonly nats: {
    readonly servers: string | string[];
    readonly authenticator?: NatsOptions['authenticator'];
  };
  readonly registry: MessageRegistry;
  /** Streams this service declares (created or updated at start). */
  readonly streams: readonly StreamDefinition[];
  /** Namespace prefix (tests); default ''. */
  readonly prefix?: string;
  /** Consumers to run, built once the database, store and NATS exist. */
  readonly consumers?: (deps: {
    db: Database;
    store: PostgresEventStore;
    nats: NatsHandle;
  }) => readonly ConsumerSpec[];
  /** Registry for the pipeline's metrics (served by the service's metrics endpoint). */
  readonly metrics?: Registry;
  readonly onError?: (error: unknown, context: string) => void;
}

/**
 * Starts the relay and consumers when the application has bootstrapped and stops them, in reverse,
 * before it shuts down: consumers finish their batch, the relay its round, then NATS drains and the
 * pool closes. Enable Nest's shutdown hooks (`app.enableShutdownHooks()`) so SIGTERM runs this.
 */
export class EventingRuntime {
  constructor(
    readonly db: Database,
    readonly nats: NatsHandle,
    readonly relay: OutboxRelay,
    readonly consumers: readonly DurableConsumer[],
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.relay.start();
    for (const consumer of this.consumers) await consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const consumer of this.consumers) await consumer.stop();
    await this.relay.stop();
    await this.nats.close();
    await this.db.close();
  }
}

@Module({})
export class EventingModule {
  static forRoot(options: EventingModuleOptions): DynamicModule {
    const prefix = options.prefix ?? '';
    const metrics = options.metrics ? eventingMetrics(options.metrics) : undefined;
    const providers: Provider[] = [
      { provide: EVENTING_REGISTRY, useValue: options.registry },
      {
        provide: EVENTING_DATABASE,
        useFactory: () => new Database({ ...options.database, applicationName: options.service }).open(),
      },
      {
        provide: EVENTING_NATS,
        useFactory: async () => {
          const nats = await connectNats({
            servers: options.nats.servers,
            name: options.service,
            ...(options.nats.authenticator ? { authenticator: options.nats.authenticator } : {}),
          });
          await ensureStreams(nats.jsm, options.streams, prefix);
          return nats;
        },
      },
      {
        provide: EVENTING_EVENT_STORE,
        useFactory: (db: Database) => new PostgresEventStore(db, options.registry, prefix),
        inject: [EVENTING_DATABASE],
      },
      {
        provide: EVENTING_RUNTIME,
        useFactory: (db: Database, nats: NatsHandle, store: PostgresEventStore) => {
          const relay = new OutboxRelay({
            db,
            js: nats.js,
            channel: store.channel,
            ...(metrics ? { metrics } : {}),
            ...(options.onError ? { onError: options.onError } : {}),
          });
          const consumers = (options.consumers?.({ db, store, nats }) ?? []).map(
            (spec) =>
              new DurableConsumer({
                ...spec,
                db,
                ...nats,
                registry: options.registry,
                prefix,
                ...(metrics ? { metrics } : {}),
                ...(options.onError && !spec.onError ? { onError: options.onError } : {}),
              }),
          );
          return new EventingRuntime(db, nats, relay, consumers);
        },
        inject: [EVENTING_DATABASE, EVENTING_NATS, EVENTING_EVENT_STORE],
      },
    ];
    return {
      module: EventingModule,
      global: true,
      providers,
      exports: [EVENTING_REGISTRY, EVENTING_DATABASE, EVENTING_NATS, EVENTING_EVENT_STORE, EVENTING_RUNTIME],
    };
  }
}
