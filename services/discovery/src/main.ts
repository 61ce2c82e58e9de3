import { runService } from '@gpunet/service-runtime';
import { configFromEnv } from './app/discovery.config';
import { DiscoveryModule } from './app/discovery.module';

const config = configFromEnv(process.env);

runService({
  name: 'discovery',
  module: ({ metrics, logger }) =>
    DiscoveryModule.forRoot({
      config,
      metrics,
      onError: (error, context) => logger.error({ err: error }, context),
    }),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
