import { GetPlacementExplanation, type QueryRequest, type QueryResponse } from '@gpunet/contracts';
import { served } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { PlacementExplanationsRepository } from '../infra/placement-explanations.repository';
import { PLACEMENT_EXPLANATIONS } from './scheduler.tokens';

/**
 * Why a job is placed where it is, or why not (`scheduler.placement-explanation`). Every replica
 * answers, the placer and standbys alike: the projection is in the shared schema.
 */
@Controller()
export class PlacementExplanationsHandler {
  constructor(
    @Inject(PLACEMENT_EXPLANATIONS) private readonly explanations: PlacementExplanationsRepository,
  ) {}

  @MessagePattern(GetPlacementExplanation, served({ queue: 'scheduler' }))
  async explanation(
    @Payload() request: QueryRequest<typeof GetPlacementExplanation>,
  ): Promise<QueryResponse<typeof GetPlacementExplanation>> {
    return { explanation: await this.explanations.find(request.jobId) };
  }
}
