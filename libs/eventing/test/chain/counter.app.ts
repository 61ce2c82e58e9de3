/**
 * The chain proof's two small services in the service shape every gpunet service has: the counter
 * service (a command → the command handler → event store → outbox) and the counter projector (an
 * `@EventPattern` controller on the JetStream transport → projection), each booted as a Nest
 * microservice over its `EventingModule`. Injection names its tokens: gpunet builds without
 * decorator metadata.
 */
import type { PayloadOf } from '@gpunet/contracts';
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import {
  type CommandHandler,
  durable,
  EVENTING,
  type EventContext,
  EventingModule,
  type EventingRuntime,
} from '../../src';
import {
  type CounterEvent,
  counterDecider,
  CounterIncremented,
  type Increment,
  CounterStream,
  counterRegistry,
} from '../fixtures/counter';
import { applyAudit } from '../fixtures/projection';
import { env } from './spans';

@Injectable()
export class CounterCommands {
  private readonly handler: CommandHandler<Increment, CounterEvent, { total: number }>;

  constructor(@Inject(EVENTING) eventing: EventingRuntime) {
    this.handler = eventing.commandHandler({ decider: counterDecider });
  }

  increment(counterId: string, by: number, requestId: string) {
    return this.handler.handle(
      `counter-${counterId}`,
      { counterId, by, limit: 100 },
      { correlationId: requestId, causationId: requestId },
    );
  }
}

@Controller()
export class CounterProjectionHandler {
  @EventPattern(CounterIncremented, durable('chain-projection'))
  incremented(@Payload() _counter: PayloadOf<typeof CounterIncremented>, @Ctx() ctx: EventContext) {
    return applyAudit(ctx.envelope, ctx.tx);
  }
}

const eventing = (service: string) =>
  EventingModule.forRoot({
    service,
    database: { url: env('DATABASE_URL'), schema: env('SCHEMA') },
    nats: { servers: env('NATS_URL') },
    registry: counterRegistry,
    streams: [CounterStream],
    prefix: env('PREFIX'),
  });

@Module({ imports: [eventing('counter-service')], providers: [CounterCommands] })
export class CounterServiceModule {}

@Module({ imports: [eventing('counter-projector')], controllers: [CounterProjectionHandler] })
export class CounterProjectorModule {}
