import { type FilterPlugin, SUCCESS, unschedulable } from '@gpunet/scheduling';

export const DISCOVERY_OFFER = 'discovery-offer';
export const DiscoveryOfferReason = { NotOffered: 'NotOffered' } as const;

/**
 * Only GPUs that discovery offered for this very allocation. Discovery checks what the snapshot
 * cannot (image prefixes, CPU/memory, availability windows); in an ensemble the
 * candidates of every allocation share one snapshot, so without this filter one allocation could
 * take a GPU only another allocation's query qualified.
 */
export const discoveryOfferFilter = (
  /** Allocation name → GPU uuids discovery offered for it. */
  offered: ReadonlyMap<string, ReadonlySet<string>>,
): FilterPlugin => ({
  name: DISCOVERY_OFFER,
  gpuFilter: ({ request }) => {
    const mine = offered.get(request.name);
    if (mine === undefined) return null;
    const no = unschedulable(
      DISCOVERY_OFFER,
      DiscoveryOfferReason.NotOffered,
      `GPU was not offered by discovery for allocation '${request.name}'`,
    );
    return (gpu) => (mine.has(gpu.uuid) ? SUCCESS : no);
  },
  describe: () => null,
});
