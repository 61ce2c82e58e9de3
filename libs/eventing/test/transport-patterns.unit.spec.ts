import { createRegistry, defineEvent, defineUpcaster, type PayloadOf } from '@gpunet/contracts';
import { Controller, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload } from '@nestjs/microservices';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { durable, type EventingRuntime, JetStreamTransport } from '../src';
import { CounterStream } from './fixtures/counter';

/*
 * How the transport binds `@EventPattern` methods to durable consumers, through Nest's own
 * registration of listeners (no NATS, no Postgres: the consumers are built only at `listen`).
 */

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
  description: 'a counter went back to zero, saying why',
  schema: ResetV1.schema.extend({ reason: z.string().default('unknown') }),
});
const registry = createRegistry(
  [ResetV1, Reset],
  [defineUpcaster({ from: ResetV1, to: Reset, upcast: (data) => ({ ...data, reason: 'unknown' }) })],
);

/** A runtime as far as binding handlers needs one: its registry. */
const runtime = { registry, streams: [CounterStream], options: {}, bindConsumers: () => undefined };

const bind = async (controller: Type<unknown>): Promise<JetStreamTransport> => {
  @Module({ controllers: [controller] })
  class Bound {}
  const transport = new JetStreamTransport(runtime as unknown as EventingRuntime);
  const app = await NestFactory.createMicroservice(Bound, { strategy: transport, logger: false });
  try {
    // `init` registers the listeners (addHandler) without listening.
    await app.init();
    return transport;
  } finally {
    await app.close();
  }
};

describe('JetStreamTransport: binding event patterns', () => {
  it('binds one method to every version of a type, which the registry upcasts: one handler', async () => {
    @Controller()
    class Resets {
      @EventPattern([ResetV1, Reset], durable('pattern-resets'))
      reset(@Payload() _reset: PayloadOf<typeof Reset>) {}
    }
    const transport = await bind(Resets);
    expect(transport.describe().consumers).toEqual([
      { name: 'pattern-resets', stream: CounterStream.name, types: ['counter.reset'] },
    ]);
  });

  it('refuses two methods for versions of one type', async () => {
    @Controller()
    class Twice {
      @EventPattern(ResetV1, durable('pattern-twice'))
      old(@Payload() _reset: PayloadOf<typeof ResetV1>) {}

      @EventPattern(Reset, durable('pattern-twice'))
      current(@Payload() _reset: PayloadOf<typeof Reset>) {}
    }
    await expect(bind(Twice)).rejects.toThrow(/two handlers for counter\.reset/);
  });
});
