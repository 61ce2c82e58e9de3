import { runService } from '@gpunet/service-runtime';
import { configFromEnv, missingNodeFlags } from './app/discovery.config';
import { DiscoveryModule } from './app/discovery.module';

const config = configFromEnv(process.env);

runService({
  name: 'discovery',
  module: ({ metrics, logger }) => {
    const missing = missingNodeFlags(process.execArgv, process.env['NODE_OPTIONS']);
    if (missing.length > 0)
      logger.warn(
        { missing },
        'discovery runs without its node flags: expect full collections in its query tail',
      );
    return DiscoveryModule.forRoot({
      config,
      metrics,
      onError: (error, context) => logger.error({ err: error }, context),
    });
  },
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
