import type { PoolHost } from '../assembly/gang';
import { modelGroups } from '../assembly/groups';
import { distribute, shapeLimits } from '../assembly/shape';
import { eligibility } from '../framework/eligibility';
import type { PluginRegistry } from '../framework/plugin';
import { buildPool } from '../framework/pool';
import { defaultRegistry } from '../framework/registry';
import { DEFAULT_WORKLOAD, type GangRequest } from '../model/request';
import { gangNetwork, predictStepTime, ringUs } from '../objective/step-time';
import type { ClusterSnapshot } from '../snapshot/cluster-snapshot';
import { hostLink, meetsBounds } from '../snapshot/network';

export interface ExhaustiveResult {
  readonly stepUs: number;
  readonly pricePerHourMinor: number;
  readonly hostIds: readonly string[];
  readonly counts: readonly number[];
}

/**
 * The exact minimum predicted step time of a gang — for tests and benchmarks on small instances
 * only: it enumerates every subset of usable hosts (2^hosts), so it refuses more than `maxHosts`.
 *
 * Exact because, for a fixed host set S and a fixed slowest speed θ, the step time is
 * compute(θ) + network(S) + max over hosts of an increasing function of the host's count, and
 * filling one rank at a time where that function grows least minimizes such a maximum. Every
 * feasible gang is covered by its own (S, θ). Providers' per-job caps are checked, not optimized
 * around (the quality instances have none).
 */
export const exhaustiveOptimum = (
  snapshot: ClusterSnapshot,
  gang: GangRequest,
  options: { readonly registry?: PluginRegistry; readonly maxHosts?: number } = {},
): ExhaustiveResult | null => {
  const registry = options.registry ?? defaultRegistry;
  const inv = snapshot.inventory;
  const workload = gang.workload ?? DEFAULT_WORKLOAD;
  const ctx = { request: gang, inventory: inv, workload };
  const pool = buildPool(ctx, snapshot, eligibility(ctx, registry), [], 0, null);
  const maxHosts = options.maxHosts ?? 16;
  const l = shapeLimits(gang);
  const bits = workload.allReduceBytes * 8;
  const groups = modelGroups(pool.hosts, gang.mixedModels).map((g) => g.hosts);
  let best: ExhaustiveResult | null = null;
  const ic = gang.interconnect;
  for (const hosts of groups) {
    const k = hosts.length;
    if (k > maxHosts) throw new RangeError(`exhaustiveOptimum: ${k} hosts, at most ${maxHosts}`);
    const pairOk: boolean[][] = hosts.map((a) =>
      hosts.map((b) => {
        if (a === b) return true;
        if (ic.sameSite && a.siteIndex !== b.siteIndex) return false;
        return meetsBounds(inv, hostLink(inv, a.hostIndex, b.hostIndex), ic.minBandwidthBps, ic.maxRttUs);
      }),
    );
    for (let set = 1; set < 1 << k; set++) {
      const members: PoolHost[] = [];
      const idx: number[] = [];
      for (let i = 0; i < k; i++)
        if ((set >> i) & 1) {
          members.push(hosts[i]!);
          idx.push(i);
        }
      if (members.length > l.maxNodes || members.length * l.perNodeMin > l.total) continue;
      if (!idx.every((i) => idx.every((j) => pairOk[i]![j]!))) continue;
      const network = gangNetwork(
        inv,
        members.map((m) => m.hostIndex),
      );
      const speeds = [...new Set(members.flatMap((m) => m.speeds))].sort((a, b) => b - a);
      for (const tier of speeds) {
        const caps = members.map((m) => {
          let c = 0;
          while (c < m.speeds.length && m.speeds[c]! >= tier) c++;
          c = Math.min(c, l.perNodeMax);
          return c - (c % l.step);
        });
        const counts = distribute(l.total, caps, l.perNodeMin, l.step, (i, n) => {
          const link = members[i]!.host.intraHost;
          return ringUs(bits, n, link.bandwidthBps, link.latencyUs);
        });
        if (counts === null) continue;
        const perProvider = new Map<number, number>();
        let capped = false;
        members.forEach((m, i) => {
          const n = (perProvider.get(m.providerIndex) ?? 0) + counts[i]!;
          perProvider.set(m.providerIndex, n);
          if (n > (m.provider.policy.maxGpusPerJob ?? Infinity)) capped = true;
        });
        if (capped) continue;
        let slowest = Infinity;
        let price = 0;
        members.forEach((m, i) => {
          slowest = Math.min(slowest, m.speeds[counts[i]! - 1]!);
          for (let j = 0; j < counts[i]!; j++) price += m.prices[j]!;
        });
        const p = predictStepTime(
          inv,
          workload,
          members.map((m, i) => ({ host: m.hostIndex, gpus: counts[i]! })),
          slowest,
          network,
        );
        if (
          best === null ||
          p.stepUs < best.stepUs ||
          (p.stepUs === best.stepUs && price < best.pricePerHourMinor)
        ) {
          best = {
            stepUs: p.stepUs,
            pricePerHourMinor: price,
            hostIds: members.map((m) => m.host.id),
            counts,
          };
        }
      }
    }
  }
  return best;
};
