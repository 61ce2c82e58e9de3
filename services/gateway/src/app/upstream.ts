import type { QueryDefinition, QueryRequest, QueryResponse } from '@gpunet/contracts';
import { EVENTING, type EventingRuntime, NoRespondersError, QueryTimeoutError } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import { UpstreamUnavailableError } from '../domain/gateway.errors';
import type { GatewayConfig } from './gateway.config';
import { GATEWAY_CONFIG } from './gateway.tokens';

/** The other services' queries the API answers with (settlement's, discovery's). */
@Injectable()
export class Upstream {
  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** Asks another service; its absence or silence is a 503, not a 500. */
  async ask<Q extends QueryDefinition>(def: Q, request: QueryRequest<Q>): Promise<QueryResponse<Q>> {
    try {
      return await this.eventing.client.ask(def, request, { timeoutMs: this.config.queryTimeoutMs });
    } catch (error) {
      if (error instanceof NoRespondersError || error instanceof QueryTimeoutError)
        throw new UpstreamUnavailableError(`${def.name} is unavailable: ${error.message}`, { cause: error });
      throw error;
    }
  }
}
