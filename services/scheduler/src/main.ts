import { runService } from '@gpunet/service-runtime';
import { configFromEnv } from './app/scheduler.config';
import { SchedulerModule } from './app/scheduler.module';

const config = configFromEnv(process.env);

runService({
  name: 'scheduler',
  module: ({ metrics, logger }) =>
    SchedulerModule.forRoot({
      config,
      metrics,
      onError: (error, context) => logger.error({ err: error }, context),
      // Why a job waits, which round reserved what, what was declined: one line per decision; an
      // accepted reservation (one per node of a round) only at debug.
      onDecision: ({ jobId, decision, fields }) =>
        logger[decision === 'ReservationAccepted' ? 'debug' : 'info'](
          { jobId, decision, ...fields },
          `job ${decision}`,
        ),
    }),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
