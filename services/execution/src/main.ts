import { runService } from '@gpunet/service-runtime';
import { configFromEnv } from './app/execution.config';
import { ExecutionModule } from './app/execution.module';

const config = configFromEnv(process.env);

runService({
  name: 'execution',
  module: ({ metrics, logger }) =>
    ExecutionModule.forRoot({
      config,
      metrics,
      onError: (error, context) => logger.error({ err: error }, context),
    }),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
