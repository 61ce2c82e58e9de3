import {
  FindGpuProfiles,
  FindGpuVerification,
  FindReliability,
  GetNetworkEstimate,
  GetProviderTrust,
} from '@gpunet/contracts';
import { EVENTING, type EventingRuntime, served } from '@gpunet/eventing';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  findGpuProfiles,
  findReliability,
  getNetworkEstimate,
  type ServedRequest,
} from '../infra/queries.repository';
import { findGpuVerification, getProviderTrust } from '../infra/challenges.repository';

/** Replicas share the queries. */
const SERVED = served({ queue: 'benchmarking' });

/**
 * What the scheduler reads of benchmarking: GPU profiles, reliability and the network estimate; and
 * one provider's trust (its GPUs' verification, reliability and latest challenges), and a page of
 * providers' GPU verification statuses for the gateway's listing.
 */
@Controller()
export class BenchmarkingQueriesHandler {
  constructor(@Inject(EVENTING) private readonly eventing: EventingRuntime) {}

  @MessagePattern(FindGpuProfiles, SERVED)
  gpuProfiles(@Payload() request: ServedRequest<typeof FindGpuProfiles>) {
    return findGpuProfiles(this.eventing.db, request, this.eventing.clock.now());
  }

  @MessagePattern(FindReliability, SERVED)
  reliability(@Payload() request: ServedRequest<typeof FindReliability>) {
    return findReliability(this.eventing.db, request);
  }

  @MessagePattern(GetProviderTrust, SERVED)
  providerTrust(@Payload() request: ServedRequest<typeof GetProviderTrust>) {
    return getProviderTrust(this.eventing.db, request.providerId);
  }

  @MessagePattern(FindGpuVerification, SERVED)
  gpuVerification(@Payload() request: ServedRequest<typeof FindGpuVerification>) {
    return findGpuVerification(this.eventing.db, request.providerIds);
  }

  @MessagePattern(GetNetworkEstimate, SERVED)
  networkEstimate(@Payload() request: ServedRequest<typeof GetNetworkEstimate>) {
    return getNetworkEstimate(this.eventing.db, request, this.eventing.clock.now());
  }
}
