import { readFileSync } from 'node:fs';
import type { Logger, Registry } from '@gpunet/telemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { RelayServer } from '../infra/relay-server';
import { registerRelayMetrics } from '../infra/relay.metrics';
import type { RelayConfig } from './relay.config';

/** Injection token of the running relay server. */
export const RELAY_SERVER = Symbol('gpunet.relay.server');

export interface RelayModuleOptions {
  readonly config: RelayConfig;
  /** The service's registry (from `SERVICE_CONTEXT`): the relay's metrics go there. */
  readonly metrics?: Registry;
  readonly logger?: Logger;
}

/** The relay's lifecycle under Nest: listens on bootstrap, closes every connection on shutdown. */
class RelayLifecycle {
  constructor(readonly server: RelayServer) {}
  async onApplicationBootstrap(): Promise<void> {
    await this.server.start();
  }
  async beforeApplicationShutdown(): Promise<void> {
    await this.server.stop();
  }
}

@Module({})
export class RelayModule {
  static forRoot(options: RelayModuleOptions): DynamicModule {
    const { config } = options;
    const server = new RelayServer({
      relayId: config.relayId,
      host: config.host,
      port: config.port,
      stunPorts: config.stunPorts,
      verifyKeys: config.verifyKeys,
      limits: { jobRateBytesPerSec: config.jobRateBytesPerSec, jobBurstBytes: config.jobBurstBytes },
      ...(config.tlsCertFile && config.tlsKeyFile
        ? {
            tls: {
              cert: readFileSync(config.tlsCertFile, 'utf8'),
              key: readFileSync(config.tlsKeyFile, 'utf8'),
            },
          }
        : {}),
      log: (level, message, fields) => options.logger?.[level](fields ?? {}, message),
    });
    if (options.metrics) registerRelayMetrics(options.metrics, server);
    return {
      module: RelayModule,
      providers: [{ provide: RELAY_SERVER, useFactory: () => new RelayLifecycle(server) }],
      exports: [RELAY_SERVER],
    };
  }
}
