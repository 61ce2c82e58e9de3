import type { DynamicModule, INestMicroservice, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  EVENTING,
  type EventingRuntime,
  JetStreamTransport,
  type JetStreamTransportOptions,
  RethrowRpcFilter,
} from '../src';

/**
 * Boots `module` (which imports `EventingModule`) as a Nest microservice on the JetStream transport
 * and listens: what `runService` does for a service, without its telemetry and signals.
 */
export const bootOnTransport = async (
  module: Type<unknown> | DynamicModule,
  options: JetStreamTransportOptions = {},
): Promise<{ app: INestMicroservice; transport: JetStreamTransport }> => {
  let transport: JetStreamTransport | undefined;
  const app = await NestFactory.createMicroservice(module, {
    logger: false,
    inject: [EVENTING],
    useFactory: (runtime: EventingRuntime) => {
      transport = new JetStreamTransport(runtime, options);
      return { strategy: transport };
    },
  });
  app.useLogger(false);
  app.useGlobalFilters(new RethrowRpcFilter());
  try {
    await app.listen();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return { app, transport: transport! };
};
