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
    }),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
