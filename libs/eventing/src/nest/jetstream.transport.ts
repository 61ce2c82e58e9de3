import type { Envelope, MessageDefinition, QueryDefinition, StreamDefinition } from '@gpunet/contracts';
import type { Subscription } from '@nats-io/nats-core';
import { type CustomTransportStrategy, type MessageHandler, Server } from '@nestjs/microservices';
import { isObservable, lastValueFrom } from 'rxjs';
import { DurableConsumer, type HandlerContext } from '../jetstream/consumer';
import { serveQuery } from '../query/query';
import { EventBatchContext, EventContext, MessageContext, QueryContext } from './contexts';
import type { EventingRuntime } from './eventing.runtime';
import {
  type DurableBinding,
  type DurableSettings,
  durableOf,
  type EphemeralBinding,
  ephemeralOf,
  isMessageDefinition,
  isQueryDefinition,
  type QueryServing,
  servingOf,
} from './patterns';

/** Nest's name for this transport (`@EventPattern(…, JETSTREAM)` binds a handler to it alone). */
export const JETSTREAM = Symbol('gpunet.jetstream');

export interface JetStreamTransportOptions {
  /**
   * Start the durable consumers when the application listens. Default: the runtime's
   * `consumeAtStart` (true unless the service said otherwise); false: `start()` (or the runtime's
   * `startConsuming()`) does.
   */
  readonly autoStart?: boolean;
  /** Settings for every durable consumer, under each consumer's own (tests lower `batchSize`). */
  readonly defaults?: DurableSettings;
  /**
   * Told after each consumer transaction committed, with the envelopes it applied: for awaiters
   * and measurements (bench/eventing's latencies), never for effects (those belong in the transaction).
   */
  readonly afterCommit?: (consumer: string, applied: readonly Envelope[]) => void;
}

interface DurablePlan {
  readonly binding: DurableBinding;
  readonly definitions: MessageDefinition[];
  /** The handler of each message type. */
  readonly handlers: Map<string, MessageHandler>;
  /**
   * The extras of the `@EventPattern` each type's handler came with: Nest hands every pattern of
   * one decorator the same extras object (and a callback of its own), so it tells one method bound
   * to two versions of a type from two methods bound to it.
   */
  readonly owners: Map<string, Record<string, unknown>>;
  readonly methods: Set<symbol>;
}

interface EphemeralPlan {
  readonly binding: EphemeralBinding;
  readonly definitions: MessageDefinition[];
  readonly handlers: Map<string, MessageHandler>;
  /** The `@EventPattern` extras each type's handler came with (see `DurablePlan.owners`). */
  readonly owners: Map<string, Record<string, unknown>>;
}

/** Calls one handler with a payload and its context; resolves when it has finished. */
type Invoke = (payload: unknown, context: unknown) => Promise<unknown>;

interface QueryPlan {
  readonly definition: QueryDefinition;
  readonly handler: MessageHandler;
  readonly serving: QueryServing;
}

/** What a Nest handler returned, awaited: an Observable's last value, or its error thrown. */
const settle = async (result: unknown): Promise<unknown> =>
  isObservable(result) ? lastValueFrom(result, { defaultValue: undefined }) : Promise.resolve(result);

const sameSettings = (a: DurableSettings, b: DurableSettings): boolean =>
  JSON.stringify(a, Object.keys(a).sort()) === JSON.stringify(b, Object.keys(b).sort());

/**
 * A Nest custom transport over NATS (ADR 0004): `@EventPattern(definition, durable(name))`
 * handlers run on durable JetStream pull consumers with the guarantees of `DurableConsumer` (effects,
 * inbox and checkpoint in one transaction, ack after commit, retries with backoff, dead letters with
 * the reason, batches); `@MessagePattern(query)` handlers answer core-NATS request/reply with typed
 * errors (`serveQuery`). Patterns are the contract definitions themselves, so a payload reaches its
 * handler validated (and upcast) by the registry; a handler's error reaches the consumer as thrown
 * (`RethrowRpcFilter`), which decides by its type whether to retry or dead-letter.
 */
export class JetStreamTransport extends Server implements CustomTransportStrategy {
  override readonly transportId = JETSTREAM;
  /** The consumer reports a handler's failure itself (retry or dead letter): Nest need not log it. */
  override readonly propagatesEventHandlerErrors = true;

  private readonly durables = new Map<string, DurablePlan>();
  private readonly ephemerals = new Map<string, EphemeralPlan>();
  private readonly queries = new Map<string, QueryPlan>();
  private consumers: DurableConsumer[] = [];
  private subscriptions: Subscription[] = [];
  private started = false;
  /** The consumers exist (`listen` built them). */
  private listening = false;

  constructor(
    private readonly eventing: EventingRuntime,
    private readonly options: JetStreamTransportOptions = {},
  ) {
    super();
    eventing.bindConsumers(this);
  }

  override addHandler(
    pattern: unknown,
    callback: MessageHandler,
    isEventHandler = false,
    extras: Record<string, unknown> = {},
  ): void {
    if (isEventHandler) this.addEventHandler(pattern, callback, extras);
    else this.addQueryHandler(pattern, callback, extras);
  }

  private addEventHandler(pattern: unknown, callback: MessageHandler, extras: Record<string, unknown>): void {
    if (!isMessageDefinition(pattern))
      throw new Error(
        `@EventPattern on the JetStream transport takes a message definition from @gpunet/contracts, not ${JSON.stringify(pattern)}`,
      );
    if (!this.eventing.registry.has(pattern.type, pattern.version))
      throw new Error(
        `@EventPattern(${pattern.type} v${pattern.version}): the service's registry does not hold it`,
      );
    const passing = ephemeralOf(extras);
    if (passing) {
      this.addEphemeralHandler(pattern, callback, passing, extras);
      return;
    }
    const binding = durableOf(extras);
    if (!binding)
      throw new Error(
        `@EventPattern(${pattern.type}): name its durable consumer, durable('<name>') (or ephemeral('<name>')) as the extras`,
      );
    let plan = this.durables.get(binding.name);
    if (!plan) {
      plan = { binding, definitions: [], handlers: new Map(), owners: new Map(), methods: new Set() };
      this.durables.set(binding.name, plan);
    }
    if (!sameSettings(plan.binding.settings, binding.settings) || plan.binding.batch !== binding.batch)
      throw new Error(`durable consumer ${binding.name}: its handlers disagree on its settings`);
    if (plan.definitions[0] && plan.definitions[0].stream !== pattern.stream)
      throw new Error(
        `durable consumer ${binding.name}: ${pattern.type} is on stream ${pattern.stream}, its other messages on ${plan.definitions[0].stream}`,
      );
    plan.methods.add(binding.method);
    if (binding.batch && plan.methods.size > 1)
      throw new Error(`batch consumer ${binding.name}: its messages must all go to one handler method`);
    const known = plan.handlers.get(pattern.type);
    if (known && !plan.definitions.some((d) => d.type === pattern.type && d.version === pattern.version)) {
      // Another version of the same type (the registry upcasts it): one handler for the type.
      if (known !== callback && plan.owners.get(pattern.type) !== extras && !binding.batch)
        throw new Error(`durable consumer ${binding.name}: two handlers for ${pattern.type}`);
    } else if (known) {
      throw new Error(`durable consumer ${binding.name}: ${pattern.type} v${pattern.version} bound twice`);
    }
    if (!known) {
      plan.handlers.set(pattern.type, callback);
      plan.owners.set(pattern.type, extras);
    }
    plan.definitions.push(pattern);
  }

  private addEphemeralHandler(
    pattern: MessageDefinition,
    callback: MessageHandler,
    binding: EphemeralBinding,
    extras: Record<string, unknown>,
  ): void {
    let plan = this.ephemerals.get(binding.name);
    if (!plan) {
      plan = { binding, definitions: [], handlers: new Map(), owners: new Map() };
      this.ephemerals.set(binding.name, plan);
    }
    if (plan.binding.queue !== binding.queue)
      throw new Error(`subscription ${binding.name}: its handlers disagree on its queue group`);
    // Another version of a type one method already takes is the same handler (see addEventHandler).
    const owner = plan.owners.get(pattern.type);
    if (owner && owner !== extras)
      throw new Error(`subscription ${binding.name}: two handlers for ${pattern.type}`);
    if (!owner) {
      plan.handlers.set(pattern.type, callback);
      plan.owners.set(pattern.type, extras);
    }
    plan.definitions.push(pattern);
  }

  /**
   * How a handler is called: directly when `DirectHandlers` found nothing of Nest's to apply to it
   * (the fast path), else through Nest's proxy (guards, interceptors, pipes, filters), awaiting what
   * it returns — an Observable's last value, or its error thrown.
   */
  private invokerOf(callback: MessageHandler, extras: Record<string, unknown> | undefined): Invoke {
    const direct = extras ? this.eventing.directHandlerFor(extras) : undefined;
    if (direct) return async (payload, context) => settle(direct(payload, context));
    return async (payload, context) => settle(await callback(payload, context));
  }

  private addQueryHandler(pattern: unknown, callback: MessageHandler, extras: Record<string, unknown>): void {
    if (!isQueryDefinition(pattern))
      throw new Error(
        `@MessagePattern on the JetStream transport takes a query definition from @gpunet/contracts, not ${JSON.stringify(pattern)}`,
      );
    if (this.queries.has(pattern.name)) throw new Error(`query ${pattern.name} has two handlers`);
    this.queries.set(pattern.name, { definition: pattern, handler: callback, serving: servingOf(extras) });
  }

  /** Builds the consumers, serves the queries and (unless `autoStart` is false) starts consuming. */
  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      this.consumers = [...this.durables.values()].map((plan) => this.consumerOf(plan));
      for (const plan of this.ephemerals.values()) this.subscribe(plan);
      for (const plan of this.queries.values()) this.serve(plan);
      // Subscriptions and queries exist on the server once listen returns.
      await this.eventing.nats.nc.flush();
      // A `start()` before now (a lease taken in a bootstrap hook) found no consumers yet: honour it.
      const wanted = this.started || (this.options.autoStart ?? this.eventing.options.consumeAtStart ?? true);
      this.listening = true;
      this.started = false;
      if (wanted) await this.start();
      callback();
    } catch (error) {
      callback(error);
    }
  }

  /**
   * Starts every durable consumer (idempotent): for a service that consumes only while it leads.
   * Called before `listen` (from a bootstrap hook), the consumers start as soon as they exist.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (!this.listening) return;
    for (const consumer of this.consumers) await consumer.start();
  }

  /**
   * Stops consuming: each consumer finishes its batch; the rest is redelivered. Core-NATS
   * subscriptions and queries stay served.
   */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    for (const consumer of this.consumers) await consumer.stop();
  }

  /** Whether the consumers run. */
  get consuming(): boolean {
    return this.started && this.listening;
  }

  async close(): Promise<void> {
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
    await this.stop();
  }

  /** The consumers' names and streams, for logs and tests. */
  describe(): {
    consumers: { name: string; stream: string; types: string[] }[];
    subscriptions: { name: string; queue: string | null; types: string[] }[];
    queries: string[];
  } {
    return {
      consumers: [...this.durables.values()].map((p) => ({
        name: p.binding.name,
        stream: p.definitions[0]!.stream,
        types: [...p.handlers.keys()],
      })),
      subscriptions: [...this.ephemerals.values()].map((p) => ({
        name: p.binding.name,
        queue: p.binding.queue ?? null,
        types: [...p.handlers.keys()],
      })),
      queries: [...this.queries.keys()],
    };
  }

  override on(): never {
    throw new Error('the JetStream transport emits no events to listen to');
  }

  override unwrap<T>(): T {
    return this.eventing.nats as T;
  }

  private streamOf(name: string): StreamDefinition {
    const stream = this.eventing.streams.find((s) => s.name === name);
    if (!stream) throw new Error(`stream ${name} is not among the streams the service declares`);
    return stream;
  }

  private consumerOf(plan: DurablePlan): DurableConsumer {
    const { eventing } = this;
    const settings = { ...this.options.defaults, ...plan.binding.settings };
    const common = {
      ...settings,
      name: plan.binding.name,
      stream: this.streamOf(plan.definitions[0]!.stream),
      messages: plan.definitions,
      registry: eventing.registry,
      db: eventing.db,
      nc: eventing.nats.nc,
      js: eventing.nats.js,
      jsm: eventing.nats.jsm,
      prefix: eventing.prefix,
      onError: eventing.onError,
      ...(eventing.pipelineMetrics ? { metrics: eventing.pipelineMetrics } : {}),
      ...(this.options.afterCommit
        ? {
            afterCommit: (applied: readonly Envelope[]) =>
              this.options.afterCommit!(plan.binding.name, applied),
          }
        : {}),
    };
    const invokers = new Map(
      [...plan.handlers].map(([type, callback]) => [type, this.invokerOf(callback, plan.owners.get(type))]),
    );
    if (plan.binding.batch) {
      const invoke = [...invokers.values()][0]!;
      return new DurableConsumer({
        ...common,
        handleBatch: async (envelopes, context) => {
          await invoke(envelopes, new EventBatchContext([envelopes, context]));
        },
      });
    }
    return new DurableConsumer({
      ...common,
      handle: async (envelope: Envelope, context: HandlerContext) => {
        const invoke = invokers.get(envelope.type);
        // The server filters by subject; a type the consumer takes but no handler names is a bug.
        if (!invoke)
          throw new Error(`durable consumer ${plan.binding.name} has no handler for ${envelope.type}`);
        await invoke(envelope.data, new EventContext([envelope, context]));
      },
    });
  }

  private subscribe(plan: EphemeralPlan): void {
    const { eventing } = this;
    const name = plan.binding.name;
    const rejected = (reason: string) =>
      eventing.pipelineMetrics?.subscriptionRejected.inc({ subscription: name, reason });
    const filters = [...new Set(plan.definitions.map((d) => d.filter(eventing.prefix)))];
    const invokers = new Map(
      [...plan.handlers].map(([type, callback]) => [type, this.invokerOf(callback, plan.owners.get(type))]),
    );
    for (const filter of filters)
      this.subscriptions.push(
        eventing.nats.nc.subscribe(filter, {
          ...(plan.binding.queue ? { queue: plan.binding.queue } : {}),
          callback: (error, msg) => {
            if (error) return eventing.onError(error, `subscription ${name}`);
            let envelope: Envelope;
            try {
              envelope = eventing.registry.parse(msg.json());
            } catch {
              return rejected('off-contract');
            }
            const invoke = invokers.get(envelope.type);
            if (!invoke) return rejected('unexpected-type');
            invoke(envelope.data, new MessageContext([envelope, msg.subject])).catch((failure: unknown) => {
              eventing.pipelineMetrics?.subscriptionFailures.inc({ subscription: name });
              eventing.onError(failure, `subscription ${name}: ${envelope.type} ${envelope.eventId}`);
            });
          },
        }),
      );
  }

  private serve(plan: QueryPlan): void {
    const { eventing } = this;
    this.subscriptions.push(
      serveQuery(
        plan.definition,
        async (request, msg) => settle(await plan.handler(request, new QueryContext([msg]))) as never,
        {
          nc: eventing.nats.nc,
          prefix: eventing.prefix,
          ...(plan.serving.queue ? { queue: plan.serving.queue } : {}),
          ...(plan.serving.validateResponses === false ? { validateResponses: false } : {}),
          onError: eventing.onError,
        },
      ),
    );
  }
}
