import { runService } from '@gpunet/service-runtime';
import { configFromEnv } from './app/settlement.config';
import { SettlementModule } from './app/settlement.module';
import { SimulatedChainAdapter } from './infra/chain/simulated-chain.adapter';

const config = configFromEnv(process.env);
// The only adapter built so far; configFromEnv refuses `cardano` until it exists. Being simulated,
// it also takes development deposits (`SimulatedChainDepositRequest`).
const chain = new SimulatedChainAdapter({ assets: config.assets });

runService({
  name: 'settlement',
  module: ({ metrics, logger }) =>
    SettlementModule.forRoot({
      config,
      chain,
      faucet: chain,
      metrics,
      onError: (error, context) => logger.error({ err: error }, context),
    }),
}).catch(() => {
  // runService has logged the failure.
  process.exitCode = 1;
});
