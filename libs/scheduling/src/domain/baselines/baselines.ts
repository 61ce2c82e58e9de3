import type { PoolHost } from '../assembly/gang';
import { modelGroups } from '../assembly/groups';
import { shapeLimits } from '../assembly/shape';
import { eligibility } from '../framework/eligibility';
import type { PluginRegistry } from '../framework/plugin';
import { buildPool } from '../framework/pool';
import { defaultRegistry } from '../framework/registry';
import { toAllocationPlacement } from '../framework/to-placement';
import type { Placement } from '../model/placement';
import { DEFAULT_WORKLOAD, type GangRequest } from '../model/request';
import type { ClusterSnapshot } from '../snapshot/cluster-snapshot';
import { hostLink, meetsBounds } from '../snapshot/network';

/**
 * Reference policies for benchmarks, placed through the same filters and hard constraints as the
 * scheduler (so their placements are valid) but choosing hosts the classic way, blind to speed,
 * price and network:
 * - `firstFit`: hosts in snapshot order, as many GPUs from each as allowed (models tried in name
 *   order when the job does not mix them);
 * - `bestFit`: the host that fits the whole gang most tightly, else largest hosts first with the
 *   tightest last host (Slurm/K8s MostAllocated style);
 * - `rayPack`: Ray's PACK: as few nodes as possible, nodes with the most free GPUs first.
 */
export type Baseline = (
  snapshot: ClusterSnapshot,
  id: string,
  gang: GangRequest,
  registry?: PluginRegistry,
) => Placement | null;

type Order = (hosts: readonly PoolHost[], total: number) => PoolHost[];

const baseline =
  (order: Order): Baseline =>
  (snapshot, id, gang, registry = defaultRegistry) => {
    const inv = snapshot.inventory;
    const workload = gang.workload ?? DEFAULT_WORKLOAD;
    const ctx = { request: gang, inventory: inv, workload };
    const l = shapeLimits(gang);
    const singleNode = l.maxNodes === 1 || l.total < 2 * l.perNodeMin;
    const pool = buildPool(
      ctx,
      snapshot,
      eligibility(ctx, registry),
      [],
      0,
      null,
      null,
      singleNode ? l.total : l.perNodeMin,
    );
    const ic = gang.interconnect;
    for (const { hosts } of modelGroups(pool.hosts, gang.mixedModels)) {
      const members: PoolHost[] = [];
      const counts: number[] = [];
      const taken = new Map<number, number>();
      let rest = l.total;
      for (const h of order(hosts, l.total)) {
        if (rest === 0 || members.length >= l.maxNodes) break;
        const left = (h.provider.policy.maxGpusPerJob ?? Infinity) - (taken.get(h.providerIndex) ?? 0);
        let c = Math.min(h.gpus.length, l.perNodeMax, left, rest);
        c -= c % l.step;
        if (c < l.perNodeMin || (rest - c > 0 && rest - c < l.perNodeMin)) continue;
        // The last node allowed must take all that is left.
        if (members.length === l.maxNodes - 1 && c < rest) continue;
        const connects = members.every((m) => {
          if (ic.sameSite && m.siteIndex !== h.siteIndex) return false;
          return meetsBounds(inv, hostLink(inv, m.hostIndex, h.hostIndex), ic.minBandwidthBps, ic.maxRttUs);
        });
        if (!connects) continue;
        members.push(h);
        counts.push(c);
        taken.set(h.providerIndex, (taken.get(h.providerIndex) ?? 0) + c);
        rest -= c;
      }
      if (rest === 0) {
        return {
          id,
          allocations: [toAllocationPlacement(inv, workload, gang.name, members, counts, l.step)],
        };
      }
    }
    return null;
  };

const firstFit = baseline((hosts) => [...hosts]);

const bestFit = baseline((hosts, total) => {
  const fits = hosts
    .filter((h) => h.gpus.length >= total)
    .sort((a, b) => a.gpus.length - b.gpus.length || a.hostIndex - b.hostIndex);
  if (fits.length > 0) return [fits[0]!];
  const bySize = [...hosts].sort((a, b) => b.gpus.length - a.gpus.length || a.hostIndex - b.hostIndex);
  // Largest first until the rest fits one host, then the tightest host for the rest.
  const out: PoolHost[] = [];
  let rest = total;
  const used = new Set<number>();
  while (rest > 0) {
    const tight = bySize.filter((h) => !used.has(h.hostIndex) && h.gpus.length >= rest).pop();
    const next = tight ?? bySize.find((h) => !used.has(h.hostIndex));
    if (next === undefined) break;
    out.push(next);
    used.add(next.hostIndex);
    rest -= Math.min(rest, next.gpus.length);
  }
  return [...out, ...bySize.filter((h) => !used.has(h.hostIndex))];
});

const rayPack = baseline((hosts) =>
  [...hosts].sort((a, b) => b.gpus.length - a.gpus.length || a.hostIndex - b.hostIndex),
);

export const baselines: Readonly<Record<'firstFit' | 'bestFit' | 'rayPack', Baseline>> = Object.freeze({
  firstFit,
  bestFit,
  rayPack,
});
