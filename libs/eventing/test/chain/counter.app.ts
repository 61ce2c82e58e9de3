/**
 * The chain proof's two small services as Nest applications: the counter service (commands → event
 * store → outbox) and the counter projector (JetStream → projection). Injection names its tokens:
 * gpunet builds without decorator metadata.
 */
import { Inject, Injectable, Module } from '@nestjs/common';
import {
  CommandHandler,
  type Database,
  EVENTING_EVENT_STORE,
  EVENTING_REGISTRY,
  EventingModule,
  type PostgresEventStore,
  systemClock,
} from '../../src';
import {
  counterDecider,
  CounterIncremented,
  type Increment,
  CounterStream,
  counterRegistry,
} from '../fixtures/counter';
import { applyAudit } from '../fixtures/projection';
import type { MessageRegistry } from '@gpunet/contracts';
import { env } from './spans';

@Injectable()
export class CounterCommands {
  private readonly handler: CommandHandler<
    Increment,
    Parameters<typeof counterDecider.evolve>[1],
    { total: number }
  >;

  constructor(
    @Inject(EVENTING_EVENT_STORE) store: PostgresEventStore,
    @Inject(EVENTING_REGISTRY) registry: MessageRegistry,
  ) {
    this.handler = new CommandHandler({ store, registry, decider: counterDecider, clock: systemClock });
  }

  increment(counterId: string, by: number, correlationId: string) {
    return this.handler.handle(`counter-${counterId}`, { counterId, by, limit: 100 }, { correlationId });
  }
}

const eventing = (service: string, consumers?: Parameters<typeof EventingModule.forRoot>[0]['consumers']) =>
  EventingModule.forRoot({
    service,
    database: { url: env('DATABASE_URL'), schema: env('SCHEMA') },
    nats: { servers: env('NATS_URL') },
    registry: counterRegistry,
    streams: [CounterStream],
    prefix: env('PREFIX'),
    ...(consumers ? { consumers } : {}),
  });

@Module({ imports: [eventing('counter-service')], providers: [CounterCommands] })
export class CounterServiceModule {}

@Module({
  imports: [
    eventing('counter-projector', () => [
      {
        name: 'chain-projection',
        stream: CounterStream,
        messages: [CounterIncremented],
        handle: (envelope, { tx }) => applyAudit(envelope, tx),
      },
    ]),
  ],
})
export class CounterProjectorModule {}

export type { Database };
