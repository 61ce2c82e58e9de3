import {
  buildEnvelope,
  createRegistry,
  DeadLettersStream,
  defineCommand,
  defineEvent,
  defineQuery,
  defineUpcaster,
  type Envelope,
  MessageDeadLettered,
  namespacedStream,
  originOf,
  type PayloadOf,
} from '@gpunet/contracts';
import {
  type CallHandler,
  Controller,
  type DynamicModule,
  type ExecutionContext,
  Inject,
  Injectable,
  Module,
  type NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Registry } from 'prom-client';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  connectNats,
  durable,
  EVENTING,
  type EventBatchContext,
  type EventContext,
  EventingModule,
  type EventingRuntime,
  ephemeral,
  type MessageContext,
  type JetStreamTransport,
  type NatsHandle,
  NoRespondersError,
  PermanentHandlerError,
  type QueryContext,
  served,
} from '../src';
import { CounterIncremented, CounterLimitReached, CounterStream } from './fixtures/counter';
import {
  bootOnTransport,
  DATABASE_URL,
  deleteStreams,
  dropSchema,
  NATS_URL,
  uniqueName,
  waitUntil,
} from './support';

const prefix = uniqueName('transport');
const schema = uniqueName('transport');

const CounterTotal = defineQuery({
  name: 'test-counter-total',
  version: 1,
  description: 'the total a counter reached, as the test projection holds it',
  request: z.strictObject({ counterId: z.string().min(1).max(64) }),
  response: z.strictObject({ total: z.int() }),
});

const PingEdge = defineCommand({
  type: 'edge.ping',
  version: 1,
  subject: 'cmd.edge.{edgeId}.ping.v1',
  stream: CounterStream.name,
  description: 'asks an edge to answer',
  schema: z.strictObject({ nonce: z.string() }),
});

const registry = createRegistry([CounterIncremented, CounterLimitReached, MessageDeadLettered, PingEdge]);

const hints: { counterId: string; subject: string }[] = [];
const committed: { consumer: string; eventId: string }[] = [];
const metrics = new Registry();
const metricValue = async (name: string, labels: Record<string, string>): Promise<number> => {
  const metric = (await metrics.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return Number(value?.value ?? 0);
};

/** Settings shared by the handlers of one durable: declared once, as a service would. */
const COUNTERS = durable('transport-counters', { maxAttempts: 3, backoff: { initialMs: 20, maxMs: 40 } });

@Controller()
class CounterHandlers {
  constructor(@Inject(EVENTING) private readonly eventing: EventingRuntime) {}

  @EventPattern(CounterIncremented, COUNTERS)
  async incremented(@Payload() counter: PayloadOf<typeof CounterIncremented>, @Ctx() ctx: EventContext) {
    if (counter.counterId === 'poison') throw new PermanentHandlerError('POISON', 'never applies');
    if (counter.counterId === 'flaky' && ctx.deliveryCount < 2) throw new Error('not yet');
    await ctx.tx.query(
      `INSERT INTO "${ctx.tx.schema}".seen (event_id, counter_id, total, correlation_id, causation_id, delivery)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        ctx.envelope.eventId,
        counter.counterId,
        counter.total,
        ctx.causedBy().correlationId,
        ctx.causedBy().causationId,
        ctx.deliveryCount,
      ],
    );
  }

  @EventPattern(CounterLimitReached, COUNTERS)
  async limit(@Payload() limit: PayloadOf<typeof CounterLimitReached>, @Ctx() ctx: EventContext) {
    await ctx.tx.query(
      `INSERT INTO "${ctx.tx.schema}".seen (event_id, counter_id, total, correlation_id, causation_id, delivery)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        ctx.envelope.eventId,
        limit.counterId,
        -limit.limit,
        ctx.envelope.correlationId,
        ctx.envelope.eventId,
        ctx.deliveryCount,
      ],
    );
  }

  @EventPattern([CounterIncremented, CounterLimitReached], durable('transport-batch', { batch: true }))
  async batch(@Payload() envelopes: readonly Envelope[], @Ctx() ctx: EventBatchContext) {
    expect(ctx.envelopes).toBe(envelopes);
    await ctx.tx.query(`INSERT INTO "${ctx.tx.schema}".batches (size) VALUES ($1)`, [envelopes.length]);
  }

  @EventPattern(CounterIncremented, ephemeral('transport-hints'))
  hint(@Payload() counter: PayloadOf<typeof CounterIncremented>, @Ctx() ctx: MessageContext) {
    hints.push({ counterId: counter.counterId, subject: ctx.subject });
    if (counter.counterId === 'hint-fails') throw new Error('a hint handler failed');
  }

  @MessagePattern(CounterTotal, served({ queue: 'transport-test' }))
  async total(@Payload() request: z.infer<typeof CounterTotal.request>, @Ctx() ctx: QueryContext) {
    expect(ctx.subject).toBe(CounterTotal.subject(prefix));
    const rows = await this.eventing.db.query<{ total: number }>(
      `SELECT max(total) AS total FROM "${schema}".seen WHERE counter_id = $1`,
      [request.counterId],
    );
    if (rows[0]?.total === null || rows[0]?.total === undefined)
      throw new PermanentHandlerError('UNKNOWN_COUNTER', `no counter ${request.counterId}`);
    return { total: rows[0].total };
  }
}

const eventingModule = (): DynamicModule =>
  EventingModule.forRoot({
    service: 'transport-test',
    database: { url: DATABASE_URL, schema },
    nats: { servers: NATS_URL },
    registry,
    streams: [CounterStream, DeadLettersStream],
    prefix,
    metrics,
  });

@Module({ imports: [eventingModule()], controllers: [CounterHandlers] })
class TransportTestModule {}

let app: Awaited<ReturnType<typeof bootOnTransport>>['app'];
let transport: JetStreamTransport;
let eventing: EventingRuntime;
let nats: NatsHandle;

const publish = async (
  def: typeof CounterIncremented | typeof CounterLimitReached,
  data: unknown,
  streamId: string,
) => {
  const envelope = buildEnvelope(
    def as typeof CounterIncremented,
    data as PayloadOf<typeof CounterIncremented>,
    {
      streamId,
      correlationId: 'request-1',
    },
  );
  await nats.js.publish(def.subject(undefined, prefix), JSON.stringify(envelope), {
    msgID: envelope.eventId,
  });
  return envelope;
};

const seen = (counterId: string) =>
  eventing.db.query<{ event_id: string; correlation_id: string; causation_id: string; delivery: number }>(
    `SELECT event_id, correlation_id, causation_id, delivery FROM "${schema}".seen WHERE counter_id = $1`,
    [counterId],
  );

beforeAll(async () => {
  nats = await connectNats({ servers: NATS_URL, name: 'transport-test-publisher' });
  ({ app, transport } = await bootOnTransport(TransportTestModule, {
    defaults: { batchSize: 16 },
    afterCommit: (consumer, applied) => {
      for (const e of applied) committed.push({ consumer, eventId: e.eventId });
    },
  }));
  eventing = app.get<EventingRuntime>(EVENTING);
  await eventing.db.query(`CREATE TABLE IF NOT EXISTS "${schema}".seen (
    event_id uuid PRIMARY KEY, counter_id text NOT NULL, total int NOT NULL,
    correlation_id text NOT NULL, causation_id text NOT NULL, delivery int NOT NULL)`);
  await eventing.db.query(`CREATE TABLE IF NOT EXISTS "${schema}".batches (size int NOT NULL)`);
});

afterAll(async () => {
  await app?.close();
  await nats?.close();
  await deleteStreams(NATS_URL, prefix);
  await dropSchema(schema);
});

describe('the JetStream transport: @EventPattern', () => {
  it('runs one durable consumer per name, for the handlers that name it', () => {
    expect(transport.describe()).toEqual({
      consumers: [
        {
          name: 'transport-counters',
          stream: 'COUNTERS',
          types: ['counter.incremented', 'counter.limit-reached'],
        },
        {
          name: 'transport-batch',
          stream: 'COUNTERS',
          types: ['counter.incremented', 'counter.limit-reached'],
        },
      ],
      subscriptions: [{ name: 'transport-hints', queue: null, types: ['counter.incremented'] }],
      queries: ['test-counter-total'],
    });
  });

  it('hands each handler its validated payload, the envelope and the batch’s transaction', async () => {
    const sent = await publish(CounterIncremented, { counterId: 'a', by: 1, total: 1 }, 'counter-a');
    const rows = await waitUntil(
      async () => ((await seen('a')).length > 0 ? await seen('a') : null),
      'a seen',
    );
    // What the handler causes carries the message's correlation and names it as the cause.
    expect(rows).toEqual([
      { event_id: sent.eventId, correlation_id: 'request-1', causation_id: sent.eventId, delivery: 1 },
    ]);
    const limit = await publish(CounterLimitReached, { counterId: 'a', limit: 1 }, 'counter-a');
    await waitUntil(async () => (await seen('a')).find((r) => r.event_id === limit.eventId), 'limit seen');
    // Told after the commits, per consumer (awaiters and measurements).
    await waitUntil(
      async () => committed.filter((c) => c.eventId === limit.eventId).length === 2 || null,
      'both consumers committed it',
    );
    expect(
      committed
        .filter((c) => c.eventId === sent.eventId)
        .map((c) => c.consumer)
        .sort(),
    ).toEqual(['transport-batch', 'transport-counters']);
  });

  it('retries a handler that throws, with backoff, until it succeeds', async () => {
    await publish(CounterIncremented, { counterId: 'flaky', by: 1, total: 1 }, 'counter-flaky');
    const [row] = await waitUntil(
      async () => ((await seen('flaky')).length > 0 ? await seen('flaky') : null),
      'flaky seen',
    );
    expect(row?.delivery).toBe(2);
  });

  it('dead-letters at once what a handler says can never succeed, with its code, and moves on', async () => {
    const poison = await publish(
      CounterIncremented,
      { counterId: 'poison', by: 1, total: 1 },
      'counter-poison',
    );
    await publish(CounterIncremented, { counterId: 'after-poison', by: 1, total: 1 }, 'counter-after');
    await waitUntil(
      async () => ((await seen('after-poison')).length > 0 ? true : null),
      'next message applied',
    );
    const dlq = namespacedStream(DeadLettersStream, prefix).name;
    const letter = await waitUntil(async () => {
      const last = await nats.jsm.streams
        .getMessage(dlq, {
          last_by_subj: MessageDeadLettered.subject({ consumer: 'transport-counters' }, prefix),
        })
        .catch(() => null);
      return last ? (last.json<Envelope>() as Envelope<string, PayloadOf<typeof MessageDeadLettered>>) : null;
    }, 'dead letter');
    expect(letter.data).toMatchObject({ consumer: 'transport-counters', errorCode: 'POISON', deliveries: 1 });
    expect(JSON.parse(Buffer.from(letter.data.originalBody, 'base64').toString()).eventId).toBe(
      poison.eventId,
    );
    expect(await seen('poison')).toEqual([]);
  });

  it('gives a batch consumer’s one handler every new message of a batch at once', async () => {
    const [row] = await waitUntil(async () => {
      const rows = await eventing.db.query<{ n: string }>(`SELECT sum(size) AS n FROM "${schema}".batches`);
      return Number(rows[0]?.n) >= 5 ? rows : null;
    }, 'batches');
    // a, its limit, flaky, poison and after-poison: the batch consumer has no failing handler.
    expect(Number(row?.n)).toBe(5);
  });
});

describe('the JetStream transport: ephemeral subscriptions', () => {
  it('hands what passes on core NATS to its handler, validated; drops and counts what is off contract', async () => {
    await publish(CounterIncremented, { counterId: 'hinted', by: 1, total: 1 }, 'counter-hinted');
    await waitUntil(async () => hints.find((h) => h.counterId === 'hinted'), 'hint');
    expect(hints.find((h) => h.counterId === 'hinted')?.subject).toBe(
      CounterIncremented.subject(undefined as never, prefix),
    );
    nats.nc.publish(CounterIncremented.subject(undefined, prefix), '{"not": "an envelope"}');
    nats.nc.publish(CounterIncremented.subject(undefined, prefix), 'not json');
    await waitUntil(
      async () =>
        (await metricValue('gpunet_subscription_rejected_total', { subscription: 'transport-hints' })) >= 2
          ? true
          : null,
      'rejections counted',
    );
    await publish(CounterIncremented, { counterId: 'hint-fails', by: 1, total: 1 }, 'counter-hint-fails');
    await waitUntil(
      async () =>
        (await metricValue('gpunet_subscription_handler_failures_total', {
          subscription: 'transport-hints',
        })) >= 1
          ? true
          : null,
      'failure counted',
    );
  });
});

describe('the JetStream transport: @MessagePattern', () => {
  it('answers a query with its validated response', async () => {
    expect(await eventing.client.ask(CounterTotal, { counterId: 'a' })).toEqual({ total: 1 });
    // The same through Nest's ClientProxy interface.
    expect(await lastValueFrom(eventing.client.send(CounterTotal, { counterId: 'a' }))).toEqual({ total: 1 });
  });

  it('answers a handler’s typed error with its code, and a bad request with INVALID_REQUEST', async () => {
    await expect(eventing.client.ask(CounterTotal, { counterId: 'nobody' })).rejects.toMatchObject({
      remoteCode: 'UNKNOWN_COUNTER',
    });
    const raw = await nats.nc.request(CounterTotal.subject(prefix), JSON.stringify({ counterId: '' }), {
      timeout: 2000,
    });
    expect(raw.json()).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
  });

  it('refuses what it cannot honour: emitting events, sending a non-query', async () => {
    await expect(lastValueFrom(eventing.client.emit(CounterIncremented, {}))).rejects.toMatchObject({
      code: 'NOT_SUPPORTED',
    });
    await expect(lastValueFrom(eventing.client.send('some.pattern', {}))).rejects.toMatchObject({
      code: 'NOT_SUPPORTED',
    });
  });
});

describe('the JetStream transport: commands to one recipient', () => {
  it('sends an envelope stamped with the causation and returns the validated reply', async () => {
    const received: Envelope[] = [];
    const sub = nats.nc.subscribe(PingEdge.subject({ edgeId: 'e1' }, prefix), {
      callback: (_e, msg) => {
        received.push(msg.json<Envelope>());
        msg.respond(JSON.stringify({ pong: true }));
      },
    });
    // The subscription is on another connection than the command: the server has it once flushed.
    await nats.nc.flush();
    try {
      const reply = await eventing.client.command(PingEdge, {
        params: { edgeId: 'e1' },
        data: { nonce: 'n1' },
        streamId: 'edge-e1',
        cause: originOf('ping-request'),
        reply: z.strictObject({ pong: z.boolean() }),
      });
      expect(reply).toEqual({ pong: true });
      expect(received[0]).toMatchObject({
        type: 'edge.ping',
        streamId: 'edge-e1',
        correlationId: 'ping-request',
        causationId: 'ping-request',
        data: { nonce: 'n1' },
      });
      await expect(
        eventing.client.command(PingEdge, {
          params: { edgeId: 'e1' },
          data: { nonce: 'n2' },
          streamId: 'edge-e1',
          cause: originOf('ping-request'),
          reply: z.strictObject({ pong: z.literal(false) }),
        }),
      ).rejects.toThrow(/edge\.ping reply/);
    } finally {
      sub.unsubscribe();
    }
    await expect(
      eventing.client.command(PingEdge, {
        params: { edgeId: 'offline' },
        data: { nonce: 'n3' },
        streamId: 'edge-offline',
        cause: originOf('ping-request'),
        reply: z.unknown(),
        timeoutMs: 1_000,
      }),
    ).rejects.toBeInstanceOf(NoRespondersError);
  });
});

describe('the JetStream transport: every version of a type', () => {
  const reset = {
    type: 'counter.reset',
    stream: CounterStream.name,
    description: 'a counter went back to zero',
  };
  const CounterResetV1 = defineEvent({
    ...reset,
    version: 1,
    subject: 'counters.counter.reset.v1',
    schema: z.strictObject({ counterId: z.string() }),
  });
  const CounterReset = defineEvent({
    ...reset,
    version: 2,
    subject: 'counters.counter.reset.v2',
    schema: z.strictObject({ counterId: z.string(), reason: z.string().nullable() }),
  });
  const versions = createRegistry(
    [CounterResetV1, CounterReset, MessageDeadLettered],
    [defineUpcaster({ from: CounterResetV1, to: CounterReset, upcast: (d) => ({ ...d, reason: null }) })],
  );
  const resets: PayloadOf<typeof CounterReset>[] = [];
  const bootVersions = async (controller: new (...args: never[]) => unknown) => {
    @Module({
      imports: [
        EventingModule.forRoot({
          service: 'transport-versions',
          database: { url: DATABASE_URL, schema },
          nats: { servers: NATS_URL },
          registry: versions,
          streams: [CounterStream, DeadLettersStream],
          prefix,
        }),
      ],
      controllers: [controller],
    })
    class VersionsModule {}
    return bootOnTransport(VersionsModule);
  };

  it('hands one handler method every version it names, upcast', async () => {
    @Controller()
    class Resets {
      @EventPattern([CounterResetV1, CounterReset], durable('transport-versions'))
      reset(@Payload() reset: PayloadOf<typeof CounterReset>) {
        resets.push(reset);
      }
    }
    const { app: booted } = await bootVersions(Resets);
    try {
      for (const [def, data] of [
        [CounterResetV1, { counterId: 'old' }],
        [CounterReset, { counterId: 'new', reason: 'rolled over' }],
      ] as const) {
        const envelope = buildEnvelope(def, data as never, { streamId: `counter-${data.counterId}` });
        await nats.js.publish(def.subject(undefined, prefix), JSON.stringify(envelope));
      }
      await waitUntil(() => Promise.resolve(resets.length === 2 || null), 'both resets handled');
      expect(resets).toEqual([
        { counterId: 'old', reason: null },
        { counterId: 'new', reason: 'rolled over' },
      ]);
    } finally {
      await booted.close();
    }
  });

  it('refuses two methods for two versions of one type', async () => {
    @Controller()
    class Split {
      @EventPattern(CounterResetV1, durable('transport-split'))
      old() {}
      @EventPattern(CounterReset, durable('transport-split'))
      current() {}
    }
    await expect(bootVersions(Split)).rejects.toThrow(/two handlers for counter.reset/);
  });
});

describe('how handlers are called', () => {
  it('calls a handler with nothing of Nest’s to apply directly, and keeps Nest’s path for one with an interceptor', async () => {
    const extrasOf = (method: unknown) =>
      Reflect.getMetadata('microservices:pattern_extras', method as object) as object;
    // The suite's handlers have no guard, interceptor, pipe or filter: the fast path.
    expect(eventing.directHandlerFor(extrasOf(CounterHandlers.prototype.incremented))).toBeDefined();
    expect(eventing.directHandlerFor(extrasOf(CounterHandlers.prototype.batch))).toBeDefined();

    const interceptedSchema = uniqueName('intercepted');
    const seenByInterceptor: string[] = [];
    @Injectable()
    class Counting implements NestInterceptor {
      intercept(context: ExecutionContext, next: CallHandler) {
        seenByInterceptor.push(context.switchToRpc().getContext<EventContext>().envelope.eventId);
        return next.handle();
      }
    }
    @Controller()
    class Intercepted {
      @UseInterceptors(Counting)
      @EventPattern(CounterLimitReached, durable('transport-intercepted'))
      limit(@Payload() _limit: PayloadOf<typeof CounterLimitReached>, @Ctx() _ctx: EventContext) {}
    }
    @Module({
      imports: [
        EventingModule.forRoot({
          service: 'transport-intercepted',
          database: { url: DATABASE_URL, schema: interceptedSchema },
          nats: { servers: NATS_URL },
          registry,
          streams: [CounterStream, DeadLettersStream],
          prefix,
        }),
      ],
      controllers: [Intercepted],
      providers: [Counting],
    })
    class InterceptedModule {}
    const intercepted = await bootOnTransport(InterceptedModule);
    try {
      const runtime = intercepted.app.get<EventingRuntime>(EVENTING);
      expect(runtime.directHandlerFor(extrasOf(Intercepted.prototype.limit))).toBeUndefined();
      const sent = await publish(
        CounterLimitReached,
        { counterId: 'intercepted', limit: 1 },
        'counter-intercepted',
      );
      await waitUntil(async () => seenByInterceptor.includes(sent.eventId) || null, 'the interceptor ran');
    } finally {
      await intercepted.app.close();
      await dropSchema(interceptedSchema);
    }
  });
});

describe('a service that consumes only while it leads', () => {
  /**
   * A service with one durable consumer (`name`) that starts none at listen (`consumeAtStart`
   * false), booted on the transport; `providers` may lead from their hooks.
   */
  const bootLeading = async (name: string, providers: (new (...args: never[]) => unknown)[] = []) => {
    const leadSchema = uniqueName(name);
    @Controller()
    class Applied {
      @EventPattern(CounterLimitReached, durable(`transport-${name}`))
      async limit(@Payload() limit: PayloadOf<typeof CounterLimitReached>, @Ctx() ctx: EventContext) {
        await ctx.tx.query(`CREATE TABLE IF NOT EXISTS "${ctx.tx.schema}".applied (counter_id text)`);
        await ctx.tx.query(`INSERT INTO "${ctx.tx.schema}".applied VALUES ($1)`, [limit.counterId]);
      }
    }
    @Module({
      imports: [
        EventingModule.forRoot({
          service: `transport-${name}`,
          database: { url: DATABASE_URL, schema: leadSchema },
          nats: { servers: NATS_URL },
          registry,
          streams: [CounterStream, DeadLettersStream],
          prefix,
          consumeAtStart: false,
        }),
      ],
      controllers: [Applied],
      providers,
    })
    class LeadingModule {}
    const { app: booted, transport: serving } = await bootOnTransport(LeadingModule);
    const runtime = booted.get<EventingRuntime>(EVENTING);
    return {
      runtime,
      transport: serving,
      /** Publishes a counter's limit and waits until the consumer applied it. */
      applies: async (counterId: string) => {
        await publish(CounterLimitReached, { counterId, limit: 1 }, `counter-${counterId}`);
        await waitUntil(
          async () =>
            (
              await runtime.db
                .query(`SELECT 1 FROM "${leadSchema}".applied WHERE counter_id = $1`, [counterId])
                .catch(() => [])
            ).length > 0 || null,
          `${name} consumer applied ${counterId}`,
        );
      },
      close: async () => {
        await booted.close();
        await dropSchema(leadSchema);
      },
    };
  };

  it('starts no consumer at listen with consumeAtStart false, and consumes once it says so', async () => {
    const gated = await bootLeading('gated');
    try {
      expect(gated.transport.consuming).toBe(false);
      await gated.runtime.startConsuming();
      expect(gated.transport.consuming).toBe(true);
      await gated.applies('gated');
      await gated.runtime.stopConsuming();
      expect(gated.transport.consuming).toBe(false);
    } finally {
      await gated.close();
    }
  });

  it('starts the consumers at listen when the service took its lease in a bootstrap hook', async () => {
    /** Leads at once: its bootstrap hook runs before the transport has built its consumers. */
    class Leader {
      constructor(@Inject(EVENTING) private readonly eventing: EventingRuntime) {}
      onApplicationBootstrap(): Promise<void> {
        return this.eventing.startConsuming();
      }
    }
    const led = await bootLeading('led', [Leader]);
    try {
      expect(led.transport.consuming).toBe(true);
      await led.applies('led');
    } finally {
      await led.close();
    }
  });
});

/** Why `module` failed to start on the transport (undefined: it started). */
const startError = (module: Parameters<typeof bootOnTransport>[0]): Promise<unknown> =>
  bootOnTransport(module).then(
    async ({ app: started }) => {
      await started.close();
      return undefined;
    },
    (error: unknown) => error,
  );

describe('two versions of one message type', () => {
  const ResetV1 = defineEvent({
    type: 'counter.reset',
    version: 1,
    subject: 'counters.counter.reset.v1',
    stream: CounterStream.name,
    description: 'a counter went back to zero',
    schema: z.strictObject({ counterId: z.string() }),
  });
  const Reset = defineEvent({
    type: 'counter.reset',
    version: 2,
    subject: 'counters.counter.reset.v2',
    stream: CounterStream.name,
    description: 'a counter went back to zero, and why',
    schema: z.strictObject({ counterId: z.string(), reason: z.string().nullable() }),
  });
  const versionsSchema = uniqueName('versions');
  const versionsModule = (controller: new (...args: never[]) => unknown): DynamicModule => ({
    module: class VersionsModule {},
    imports: [
      EventingModule.forRoot({
        service: 'transport-versions',
        database: { url: DATABASE_URL, schema: versionsSchema },
        nats: { servers: NATS_URL },
        registry: createRegistry(
          [ResetV1, Reset, MessageDeadLettered],
          [defineUpcaster({ from: ResetV1, to: Reset, upcast: (d) => ({ ...d, reason: null }) })],
        ),
        streams: [CounterStream, DeadLettersStream],
        prefix,
      }),
    ],
    controllers: [controller],
  });

  afterAll(() => dropSchema(versionsSchema));

  it('go to the one method whose pattern names both, upcast to the newest', async () => {
    const applied: (string | null)[] = [];
    @Controller()
    class Resets {
      @EventPattern([ResetV1, Reset], durable('transport-versions'))
      reset(@Payload() reset: PayloadOf<typeof Reset>) {
        applied.push(reset.reason);
      }
    }
    const booted = await bootOnTransport(versionsModule(Resets));
    try {
      expect(booted.transport.describe().consumers).toEqual([
        { name: 'transport-versions', stream: 'COUNTERS', types: ['counter.reset'] },
      ]);
      for (const [def, data] of [
        [ResetV1, { counterId: 'r' }],
        [Reset, { counterId: 'r', reason: 'by hand' }],
      ] as const) {
        const envelope = buildEnvelope(def as typeof Reset, data as PayloadOf<typeof Reset>, {
          streamId: 'counter-r',
        });
        await nats.js.publish(def.subject(undefined, prefix), JSON.stringify(envelope), {
          msgID: envelope.eventId,
        });
      }
      await waitUntil(async () => (applied.length === 2 ? true : null), 'both versions applied');
      expect(applied.sort()).toEqual(['by hand', null]);
    } finally {
      await booted.app.close();
    }
  });

  it('refuses two methods for the two versions', async () => {
    @Controller()
    class Split {
      @EventPattern(ResetV1, durable('transport-versions-split'))
      v1() {}
      @EventPattern(Reset, durable('transport-versions-split'))
      v2() {}
    }
    expect(String(await startError(versionsModule(Split)))).toMatch(/two handlers for counter\.reset/);
  });
});

describe('the JetStream transport refuses handlers it cannot serve, at start', () => {
  const refused = (controller: new (...args: never[]) => unknown): Promise<unknown> => {
    @Module({ imports: [eventingModule()], controllers: [controller] })
    class Broken {}
    return startError(Broken);
  };

  it('a pattern that is not a contract definition', async () => {
    @Controller()
    class Stringly {
      @EventPattern('counter.incremented', durable('x'))
      handle(_query: unknown) {}
    }
    expect(String(await refused(Stringly))).toMatch(/takes a message definition/);
  });

  it('an event handler without its durable consumer', async () => {
    @Controller()
    class Unbound {
      @EventPattern(CounterIncremented)
      handle() {}
    }
    expect(String(await refused(Unbound))).toMatch(/name its durable consumer/);
  });

  it('handlers of one consumer that disagree on its settings, or two handlers for one type', async () => {
    @Controller()
    class Disagree {
      @EventPattern(CounterIncremented, durable('same', { maxAttempts: 2 }))
      a() {}
      @EventPattern(CounterLimitReached, durable('same', { maxAttempts: 3 }))
      b() {}
    }
    expect(String(await refused(Disagree))).toMatch(/disagree on its settings/);
    @Controller()
    class Twice {
      @EventPattern(CounterIncremented, durable('twice'))
      a() {}
      @EventPattern(CounterIncremented, durable('twice'))
      b() {}
    }
    expect(String(await refused(Twice))).toMatch(/bound twice|two handlers/);
  });

  it('a message the service’s registry does not hold, and a query as an event', async () => {
    const Other = defineCommand({
      type: 'edge.other',
      version: 1,
      subject: 'cmd.edge.{edgeId}.other.v1',
      stream: CounterStream.name,
      description: 'not registered',
      schema: z.strictObject({}),
    });
    @Controller()
    class Unregistered {
      @EventPattern(Other, durable('unregistered'))
      handle() {}
    }
    expect(String(await refused(Unregistered))).toMatch(/registry does not hold it/);
    @Controller()
    class QueryAsEvent {
      @MessagePattern(CounterIncremented)
      handle() {}
    }
    expect(String(await refused(QueryAsEvent))).toMatch(/takes a query definition/);
  });
});
