import type { PoolHost } from '../assembly/gang';
import type { AllocationPlacement } from '../model/placement';
import type { WorkloadModel } from '../model/request';
import type { Inventory } from '../snapshot/cluster-snapshot';
import { gangNetwork, predictStepTime } from '../objective/step-time';

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** An allocation's placement from chosen hosts and counts (each gives its fastest usable GPUs). */
export const toAllocationPlacement = (
  inv: Inventory,
  workload: WorkloadModel,
  name: string,
  members: readonly PoolHost[],
  counts: readonly number[],
  gpusPerRank: number,
): AllocationPlacement => {
  const network = gangNetwork(
    inv,
    members.map((m) => m.hostIndex),
  );
  let slowest = Infinity;
  let price = 0;
  members.forEach((m, i) => {
    slowest = Math.min(slowest, m.speeds[counts[i]! - 1]!);
    for (let j = 0; j < counts[i]!; j++) price += m.prices[j]!;
  });
  const prediction = predictStepTime(
    inv,
    workload,
    members.map((m, i) => ({ host: m.hostIndex, gpus: counts[i]! })),
    slowest,
    network,
  );
  const nodes = members
    .map((m, i) => ({
      providerId: m.provider.id,
      hostId: m.host.id,
      siteId: inv.sites[m.siteIndex]!.id,
      gpuUuids: m.gpus.slice(0, counts[i]).map((g) => g.uuid),
      ranks: counts[i]! / Math.max(1, gpusPerRank),
    }))
    .sort((a, b) => byText(a.siteId, b.siteId) || byText(a.hostId, b.hostId));
  return {
    name,
    gpuCount: counts.reduce((s, n) => s + n, 0),
    nodes,
    prediction,
    pricePerHourMinor: price,
    sites: new Set(nodes.map((n) => n.siteId)).size,
    minPairBandwidthBps: network.minPairBandwidthBps,
    maxPairRttUs: network.maxPairRttUs,
  };
};
