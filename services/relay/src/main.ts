import { runService } from '@gpunet/service-runtime';
import { relayConfigFromEnv } from './app/relay.config';
import { RelayModule } from './app/relay.module';

const config = relayConfigFromEnv(process.env);

runService({
  // The relay forwards overlay packets; it keeps no events and consumes none.
  transport: false,
  name: 'relay',
  module: ({ metrics, logger }) => RelayModule.forRoot({ config, metrics, logger }),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
