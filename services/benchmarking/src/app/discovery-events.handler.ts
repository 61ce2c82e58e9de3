import type { Envelope } from '@gpunet/contracts';
import type { HandlerContext } from '@gpunet/eventing';
import { projectDiscoveryEvent } from '../infra/projections';

/** Keeps benchmarking's view of providers (claims, addresses, liveness, busyness) from discovery's events. */
export const handleDiscoveryEvent = async (envelope: Envelope, { tx }: HandlerContext): Promise<void> => {
  await projectDiscoveryEvent(tx, envelope);
};
