import {
  type Clock,
  type DomainEvent,
  type MessageRegistry,
  type StreamDefinition,
  systemClock,
} from '@gpunet/contracts';
import type { Registry } from '@gpunet/telemetry';
import { nkeyAuthenticator } from '@nats-io/nats-core';
import { CommandHandler, type CommandHandlerOptions } from '../command-handler';
import { Envelopes } from '../envelopes';
import { connectNats, type NatsHandle, type NatsOptions } from '../jetstream/connection';
import { ensureStreams } from '../jetstream/streams';
import { type EventingMetrics, eventingMetrics } from '../metrics';
import { OutboxRelay } from '../outbox/outbox-relay';
import { Database, type DatabaseOptions } from '../postgres/database';
import { PostgresEventStore } from '../postgres/event-store';
import type { DirectHandler } from './direct-handlers';
import { EventingClient } from './eventing.client';

export interface EventingOptions {
  /** The service's name: NATS connection name, Postgres application name, log context. */
  readonly service: string;
  /** Postgres: the service's URL, own schema and migrations (run after the eventing tables'). */
  readonly database: Omit<DatabaseOptions, 'applicationName'>;
  /**
   * The NATS servers and, where the server requires it, this service's own credentials: its user's
   * nkey `seed` (each service has its own user, see deploy/nats), or any nats.js authenticator.
   */
  readonly nats: {
    readonly servers: string | string[];
    readonly seed?: string | null;
    readonly authenticator?: NatsOptions['authenticator'];
  };
  /** Every message the service reads or writes. */
  readonly registry: MessageRegistry;
  /** The streams the service declares (created or updated at start, idempotently). */
  readonly streams: readonly StreamDefinition[];
  /** Namespace prefix of subjects and streams (tests: unique per suite). Default ''. */
  readonly prefix?: string;
  /** The time of every envelope and decision; tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: Clock;
  /** The service's metrics registry: the pipeline's metrics are registered in it. */
  readonly metrics?: Registry;
  /** Told every failure the pipeline recovers from (a retried message, a relay round). */
  readonly onError?: (error: unknown, context: string) => void;
  /**
   * Start the durable consumers when the application listens. Default true. False for a service
   * that consumes only while it holds a lease: it calls `startConsuming()` once it leads.
   */
  readonly consumeAtStart?: boolean;
}

/** What serves a runtime's durable consumers (the JetStream transport). */
export interface ConsumerGate {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * One service's eventing, opened: its database (event store, outbox, inbox, snapshots), its NATS
 * connection with its own credentials, its streams, the outbox relay, the envelope stamp and a
 * client. `EventingModule.forRoot` provides it under `EVENTING`; the JetStream transport runs the
 * service's handlers on it. Nest calls the hooks: the relay starts once the application has
 * bootstrapped; relay, NATS and Postgres close last, after every handler and hook has finished
 * (`onApplicationShutdown`), so a service's own shutdown hooks may still read and append.
 */
export class EventingRuntime {
  readonly store: PostgresEventStore;
  readonly relay: OutboxRelay;
  readonly envelopes: Envelopes;
  readonly client: EventingClient;
  readonly pipelineMetrics: EventingMetrics | undefined;
  readonly clock: Clock;
  readonly prefix: string;
  readonly onError: (error: unknown, context: string) => void;
  private closed: Promise<void> | undefined;
  private gate: ConsumerGate | undefined;
  private direct: ReadonlyMap<object, DirectHandler> = new Map();

  private constructor(
    readonly options: EventingOptions,
    readonly db: Database,
    readonly nats: NatsHandle,
  ) {
    this.prefix = options.prefix ?? '';
    this.clock = options.clock ?? systemClock;
    this.onError = options.onError ?? (() => undefined);
    this.pipelineMetrics = options.metrics ? eventingMetrics(options.metrics) : undefined;
    this.store = new PostgresEventStore(db, options.registry, this.prefix);
    this.relay = new OutboxRelay({
      db,
      js: nats.js,
      channel: this.store.channel,
      onError: this.onError,
      ...(this.pipelineMetrics ? { metrics: this.pipelineMetrics } : {}),
    });
    this.envelopes = new Envelopes(this.clock);
    this.client = new EventingClient({ nats, envelopes: this.envelopes, prefix: this.prefix });
  }

  /** Opens the database (running migrations), connects to NATS and declares the streams. */
  static async open(options: EventingOptions): Promise<EventingRuntime> {
    const db = await new Database({ ...options.database, applicationName: options.service }).open();
    let nats: NatsHandle | undefined;
    try {
      const seed = options.nats.seed;
      const authenticator =
        options.nats.authenticator ?? (seed ? nkeyAuthenticator(new TextEncoder().encode(seed)) : undefined);
      nats = await connectNats({
        servers: options.nats.servers,
        name: options.service,
        ...(authenticator ? { authenticator } : {}),
      });
      await ensureStreams(nats.jsm, options.streams, options.prefix ?? '');
    } catch (error) {
      await nats?.close().catch(() => undefined);
      await db.close();
      throw error;
    }
    return new EventingRuntime(options, db, nats);
  }

  get registry(): MessageRegistry {
    return this.options.registry;
  }

  get streams(): readonly StreamDefinition[] {
    return this.options.streams;
  }

  /** A command handler on this service's store, registry and clock. */
  commandHandler<C, E extends DomainEvent, S>(
    options: Omit<CommandHandlerOptions<C, E, S>, 'db' | 'store' | 'registry' | 'clock'>,
  ): CommandHandler<C, E, S> {
    return new CommandHandler({
      ...options,
      db: this.db,
      store: this.store,
      registry: this.registry,
      clock: this.clock,
    });
  }

  /** Called by the transport that serves this runtime's handlers. */
  bindConsumers(gate: ConsumerGate): void {
    if (this.gate && this.gate !== gate)
      throw new Error('a second transport serves the same eventing runtime');
    this.gate = gate;
  }

  /** Called at module init with the event handlers the transport may call directly (`DirectHandlers`). */
  bindDirectHandlers(direct: ReadonlyMap<object, DirectHandler>): void {
    this.direct = direct;
  }

  /** The direct call of the handler declared with these `@EventPattern` extras, if it has one. */
  directHandlerFor(extras: object): DirectHandler | undefined {
    return this.direct.get(extras);
  }

  /** Starts the durable consumers (idempotent): a service that leads by lease calls it once it leads. */
  startConsuming(): Promise<void> {
    if (!this.gate) throw new Error('no transport serves this service’s handlers yet');
    return this.gate.start();
  }

  /** Stops the durable consumers (each finishes its batch); queries stay served. */
  stopConsuming(): Promise<void> {
    return this.gate?.stop() ?? Promise.resolve();
  }

  /** Whether Postgres answers and NATS is connected (readiness). */
  async health(): Promise<{ database: boolean; nats: boolean }> {
    const database = await this.db
      .query('SELECT 1')
      .then(() => true)
      .catch(() => false);
    const nc = this.nats.nc;
    const nats =
      !nc.isClosed() &&
      (await Promise.race([
        nc.flush().then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000).unref()),
      ]));
    return { database, nats };
  }

  onApplicationBootstrap(): void {
    this.relay.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** Stops the relay (its round in flight finishes), drains NATS, closes the pool. Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.relay.stop();
      await this.nats.close();
      await this.db.close();
    })();
    return this.closed;
  }
}
