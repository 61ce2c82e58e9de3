import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { ApiKeyStore } from './api-keys';
import type { GatewayConfig } from './gateway.config';
import { API_KEYS, GATEWAY_CONFIG, STREAMS } from './gateway.tokens';
import type { StreamRegistry } from './http/sse';

/**
 * The gateway's own start and stop: the bootstrap admin key is valid before the API listens; open
 * event streams end before the HTTP server closes (it waits for open connections). The database
 * and NATS close after this, with the eventing runtime.
 */
@Injectable()
export class GatewayLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(API_KEYS) private readonly keys: ApiKeyStore,
    @Inject(STREAMS) private readonly streams: StreamRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.adminKey !== undefined)
      await this.keys.ensureBootstrapKey(this.config.adminKey, this.config.adminTenant);
  }

  beforeApplicationShutdown(): void {
    this.streams.closeAll();
  }
}
