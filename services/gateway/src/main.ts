import { createLogger, initTelemetry } from '@gpunet/telemetry';
import { configFromEnv } from './app/gateway.config';
import { missingGatewayNodeFlags } from './app/node-flags';
import { startGateway } from './app/gateway.app';

/*
 * The gateway serves HTTP itself (the REST API, /healthz, /readyz, /metrics), so it boots with the
 * telemetry and logger of `@gpunet/service-runtime`'s services but its own Nest HTTP application.
 */
const telemetry = initTelemetry({ serviceName: 'gateway' });
const logger = createLogger({ service: 'gateway' });

const main = async (): Promise<void> => {
  const missing = missingGatewayNodeFlags(process.execArgv);
  if (missing.length > 0)
    logger.warn(
      { missing },
      'gateway runs without its node flags: expect longer scavenges in its request tail',
    );
  const gateway = await startGateway({ config: configFromEnv(process.env), logger });
  logger.info({ url: gateway.url }, 'gateway started');
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'gateway stopping');
      gateway
        .close()
        .then(() => telemetry.shutdown())
        .then(
          () => process.exit(0),
          (error: unknown) => {
            logger.fatal({ err: error }, 'gateway shutdown failed');
            process.exit(1);
          },
        );
    });
};

main().catch(async (error: unknown) => {
  logger.fatal({ err: error }, 'gateway failed to start');
  await telemetry.shutdown();
  process.exitCode = 1;
});
