import { Writable } from 'node:stream';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { type RunningService, runService } from '@gpunet/service-runtime';
import { createLogger, type Logger } from '@gpunet/telemetry';
import {
  type FakeClock,
  type NatsTestContext,
  type PostgresTestSchema,
  serviceConnection,
} from '@gpunet/testing';
import { SchedulerModule } from '../../src/app/scheduler.module';

/** A logger that writes nothing: the int suites assert on events, not on log lines. */
export const quietLogger = (): Logger =>
  createLogger({
    service: 'scheduler',
    destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
  });

/**
 * The scheduler as production boots it (`runService`), on the suite's Postgres schema and NATS
 * prefix, with the suite's clock and the int suites' short reservation deadline.
 */
export const runScheduler = async (options: {
  readonly pg: PostgresTestSchema;
  readonly nats: NatsTestContext;
  readonly clock: FakeClock;
  readonly logger?: Logger;
  readonly onError?: (error: unknown, context: string) => void;
}): Promise<{ readonly service: RunningService; readonly eventing: EventingRuntime }> => {
  const { pg, nats, clock, onError } = options;
  const service = await runService({
    name: 'scheduler',
    module: ({ metrics }) =>
      SchedulerModule.forRoot({
        config: {
          ...serviceConnection(pg, nats),
          reservationDeadlineMs: 2_000,
          holdMs: 300_000,
          maxAttempts: 5,
        },
        clock,
        metrics,
        ...(onError ? { onError } : {}),
      }),
    handleSignals: false,
    env: {},
    logger: options.logger ?? quietLogger(),
  });
  return { service, eventing: service.app.get<EventingRuntime>(EVENTING) };
};
