import { runService } from '@gpunet/service-runtime';
import { configFromEnv } from './app/discovery.config';
import { DiscoveryModule } from './app/discovery.module';

await runService({
  name: 'discovery',
  module: ({ metrics, logger }) =>
    DiscoveryModule.forRoot({
      config: configFromEnv(process.env),
      metrics,
      onError: (error, context) => logger.error({ err: error }, context),
    }),
});
