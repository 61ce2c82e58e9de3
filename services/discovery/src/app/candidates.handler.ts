import {
  DiscoveryStream,
  FindCandidates,
  GetProvider,
  providerCatalog,
  type QueryRequest,
  type QueryResponse,
} from '@gpunet/contracts';
import { type EncodedResponse, ephemeral, EVENTING, type EventingRuntime, served } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import type { CandidateRequest } from '../domain/candidate.filter';
import type { CandidateCache } from './candidates.service';
import type { DiscoveryMetrics } from './discovery.metrics';
import { CANDIDATES, DISCOVERY_METRICS } from './discovery.tokens';

/** Every event of the provider aggregate (DISCOVERY stream): a replica re-reads the provider when one passes. */
export const providerEvents = providerCatalog.filter((d) => d.stream === DiscoveryStream.name);

/**
 * The candidate query (`q.discovery.candidates.v1`) and the provider query
 * (`q.discovery.provider.v1`), answered from the in-memory index, and the provider events that keep every replica's index fresh whoever decided them.
 */
@Controller()
export class CandidatesHandler {
  constructor(
    @Inject(CANDIDATES) private readonly candidates: CandidateCache,
    @Inject(DISCOVERY_METRICS) private readonly metrics: DiscoveryMetrics,
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
  ) {}

  // A page of 200 providers is ~500 KB: checking it here too cost ~7 ms of the p99 budget
  // (bench/discovery). The index builds it from validated projection rows, the scheduler validates
  // what it receives, and candidate-index.spec checks the output against the schema.
  @MessagePattern(FindCandidates, served({ queue: 'discovery', validateResponses: false }))
  find(@Payload() request: CandidateRequest): EncodedResponse {
    const end = this.metrics.candidateQuerySeconds.startTimer();
    try {
      // The page as JSON copied together from the index's per-provider JSON (see CandidateIndex).
      return this.candidates.queryEncoded(request, this.eventing.clock.now().getTime());
    } finally {
      end();
    }
  }

  /** One provider, offline ones included (the API's `GET /v1/providers/{providerId}`). */
  @MessagePattern(GetProvider, served({ queue: 'discovery' }))
  provider(@Payload() request: QueryRequest<typeof GetProvider>): QueryResponse<typeof GetProvider> {
    return { provider: this.candidates.index.view(request.providerId) };
  }

  // No queue group: every replica keeps its own index.
  @EventPattern(providerEvents, ephemeral('discovery-candidate-refresh'))
  changed(@Payload() event: { readonly providerId: string }): Promise<void> {
    return this.candidates.refresh([event.providerId]);
  }
}
