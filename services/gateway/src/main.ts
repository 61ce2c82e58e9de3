import { runService } from '@gpunet/service-runtime';
import { configFromEnv } from './app/gateway.config';
import { gatewayHttp } from './app/gateway.http';
import { GatewayModule } from './app/gateway.module';
import { missingGatewayNodeFlags } from './app/node-flags';

const config = configFromEnv(process.env);

runService({
  name: 'gateway',
  module: (context) => {
    const missing = missingGatewayNodeFlags(process.execArgv);
    if (missing.length > 0)
      context.logger.warn(
        { missing },
        'gateway runs without its node flags: expect longer scavenges in its request tail',
      );
    return GatewayModule.forRoot(config, context);
  },
  // The REST API (with /healthz, /readyz and /metrics) on the gateway's own port.
  http: (context) => gatewayHttp(config, context),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
