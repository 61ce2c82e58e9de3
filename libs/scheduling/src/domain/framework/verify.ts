import { shapeLimits } from '../assembly/shape';
import type { Placement } from '../model/placement';
import { DEFAULT_WORKLOAD, type EnsembleRequest } from '../model/request';
import type { ClusterSnapshot } from '../snapshot/cluster-snapshot';
import { hostLink, meetsBounds } from '../snapshot/network';
import type { RequestContext } from './context';
import type { PluginRegistry } from './plugin';
import { defaultRegistry } from './registry';

export interface Violation {
  readonly allocation: string | null;
  readonly rule: string;
  readonly message: string;
}

/**
 * Checks a placement against every hard constraint of its request, independently of how it was
 * found: GPUs exist, are free (or already held by this placement), are used once, pass every
 * filter; node shapes, max nodes, provider per-job caps over the whole ensemble, mixed models,
 * interconnect between every pair of nodes, edge constraints between allocations. Empty = valid.
 */
export const verifyPlacement = (
  snapshot: ClusterSnapshot,
  request: EnsembleRequest,
  placement: Placement,
  registry: PluginRegistry = defaultRegistry,
): Violation[] => {
  const inv = snapshot.inventory;
  const out: Violation[] = [];
  const v = (allocation: string | null, rule: string, message: string) =>
    out.push({ allocation, rule, message });
  const used = new Set<string>();
  const perProvider = new Map<number, number>();
  const hostsOf = new Map<string, number[]>();
  if (placement.id !== request.id) v(null, 'id', `placement ${placement.id} is for request ${request.id}`);
  for (const gang of request.allocations) {
    const allocs = placement.allocations.filter((a) => a.name === gang.name);
    if (allocs.length !== 1) {
      v(gang.name, 'allocation', `${allocs.length} placements for allocation ${gang.name}`);
      continue;
    }
    const alloc = allocs[0]!;
    const ctx: RequestContext = {
      request: gang,
      inventory: inv,
      workload: gang.workload ?? DEFAULT_WORKLOAD,
    };
    const hostPreds = registry.filters.flatMap((f) => {
      const p = f.hostFilter?.(ctx) ?? null;
      return p === null ? [] : [p];
    });
    const gpuPreds = registry.filters.flatMap((f) => {
      const p = f.gpuFilter?.(ctx) ?? null;
      return p === null ? [] : [p];
    });
    const l = shapeLimits(gang);
    const models = new Set<string>();
    const hosts: number[] = [];
    let total = 0;
    for (const node of alloc.nodes) {
      const h = inv.hostById.get(node.hostId);
      if (h === undefined) {
        v(gang.name, 'host', `unknown host ${node.hostId}`);
        continue;
      }
      const host = inv.hosts[h]!;
      const provider = inv.providers[host.providerIndex]!;
      if (provider.id !== node.providerId || inv.sites[host.siteIndex]!.id !== node.siteId) {
        v(gang.name, 'host', `host ${node.hostId} is not provider ${node.providerId} at ${node.siteId}`);
      }
      if (hosts.includes(h)) v(gang.name, 'node-shape', `host ${node.hostId} appears twice`);
      hosts.push(h);
      for (const p of hostPreds) {
        const st = p(host, provider);
        if (st.code !== 'Success') v(gang.name, st.plugin, `${node.hostId}: ${st.message}`);
      }
      const n = node.gpuUuids.length;
      total += n;
      if (n < l.perNodeMin || n > l.perNodeMax || n % l.step !== 0) {
        v(
          gang.name,
          'node-shape',
          `${node.hostId} has ${n} GPUs; allowed ${l.perNodeMin}–${l.perNodeMax} in steps of ${l.step}`,
        );
      }
      if (node.ranks * l.step !== n)
        v(gang.name, 'node-shape', `${node.hostId}: ${node.ranks} ranks for ${n} GPUs`);
      perProvider.set(host.providerIndex, (perProvider.get(host.providerIndex) ?? 0) + n);
      for (const uuid of node.gpuUuids) {
        const g = inv.gpuByUuid.get(uuid);
        if (g === undefined) {
          v(gang.name, 'gpu', `unknown GPU ${uuid}`);
          continue;
        }
        const gpu = inv.gpus[g]!;
        if (gpu.hostIndex !== h) v(gang.name, 'gpu', `GPU ${uuid} is not on ${node.hostId}`);
        if (used.has(uuid)) v(gang.name, 'double-booking', `GPU ${uuid} is used twice`);
        used.add(uuid);
        const owner = snapshot.owners[gpu.hostIndex]?.[gpu.local] ?? null;
        if (owner !== null && owner !== placement.id)
          v(gang.name, 'double-booking', `GPU ${uuid} is held by ${owner}`);
        models.add(gpu.model);
        for (const p of gpuPreds) {
          const st = p(gpu, host, provider);
          if (st.code !== 'Success') v(gang.name, st.plugin, `${uuid}: ${st.message}`);
        }
      }
    }
    hostsOf.set(gang.name, hosts);
    if (total !== gang.gpuCount) v(gang.name, 'node-shape', `${total} GPUs placed, ${gang.gpuCount} asked`);
    if (alloc.nodes.length > gang.maxNodes)
      v(gang.name, 'node-shape', `${alloc.nodes.length} nodes > max ${gang.maxNodes}`);
    if (!gang.mixedModels && models.size > 1)
      v(gang.name, 'mixed-models', `models ${[...models].join(', ')}`);
    const ic = gang.interconnect;
    if (hosts.length > 1) {
      if (ic.sameSite && new Set(hosts.map((h) => inv.hosts[h]!.siteIndex)).size > 1) {
        v(gang.name, 'interconnect', 'nodes at several sites');
      }
      for (let i = 0; i < hosts.length; i++) {
        for (let j = i + 1; j < hosts.length; j++) {
          const link = hostLink(inv, hosts[i]!, hosts[j]!);
          if (ic.minBandwidthBps !== null && !meetsBounds(inv, link, ic.minBandwidthBps, null)) {
            v(
              gang.name,
              'interconnect',
              `${inv.hosts[hosts[i]!]!.id}–${inv.hosts[hosts[j]!]!.id}: ${link.bandwidthBps} bit/s`,
            );
          }
          if (ic.maxRttUs !== null && !meetsBounds(inv, link, null, ic.maxRttUs)) {
            v(
              gang.name,
              'interconnect',
              `${inv.hosts[hosts[i]!]!.id}–${inv.hosts[hosts[j]!]!.id}: RTT ${link.rttUs} µs`,
            );
          }
        }
      }
    }
  }
  for (const [p, n] of perProvider) {
    const cap = inv.providers[p]!.policy.maxGpusPerJob;
    if (cap !== null && n > cap)
      v(null, 'provider-policy', `provider ${inv.providers[p]!.id}: ${n} GPUs > per-job cap ${cap}`);
  }
  for (const e of request.edgeConstraints) {
    const a = hostsOf.get(e.between[0]) ?? [];
    const b = hostsOf.get(e.between[1]) ?? [];
    for (const x of a) {
      for (const y of b) {
        if (x === y) continue;
        const link = hostLink(inv, x, y);
        if (!meetsBounds(inv, link, e.minBandwidthBps, e.maxRttUs)) {
          v(
            null,
            'edge-constraint',
            `${e.between.join('–')}: ${inv.hosts[x]!.id}–${inv.hosts[y]!.id} is ${link.rttUs} µs, ${link.bandwidthBps} bit/s`,
          );
        }
      }
    }
  }
  return out;
};
