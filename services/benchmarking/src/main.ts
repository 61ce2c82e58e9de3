import { runService } from '@gpunet/service-runtime';
import { configFromEnv } from './app/benchmarking.config';
import { BenchmarkingModule } from './app/benchmarking.module';

runService({
  name: 'benchmarking',
  module: ({ metrics, logger }) =>
    BenchmarkingModule.forRoot({
      config: configFromEnv(process.env),
      metrics,
      onError: (error, context) => logger.error({ err: error }, context),
    }),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
