import type { AssemblyContext, PoolHost } from '../../assembly/gang';
import { type ModelGroup, modelGroups } from '../../assembly/groups';
import { Collector, GangSearch, type SearchFacts } from '../../assembly/search';
import { type ShapeLimits, shapeLimits } from '../../assembly/shape';
import type { AssemblerPlugin } from '../../framework/plugin';
import type { InterconnectRequirement } from '../../model/request';
import { type Status, unschedulable } from '../../model/status';
import { formatBps, formatUs } from '../../model/units';
import { hostLink, type Link, meetsBounds } from '../../snapshot/network';

export const GANG_ASSEMBLY = 'gang-assembly';
export const GangAssemblyReason = {
  /** Fewer free matching GPUs than asked. */
  TooFewGpus: 'TooFewGpus',
  /** Enough GPUs, but not of one model, and the job does not mix models. */
  NoSingleModel: 'NoSingleModel',
  /** Per-node minimum/maximum, whole ranks or providers' per-job caps leave too few. */
  PerNodeLimits: 'PerNodeLimits',
  /** Even the largest hosts need more nodes than max_nodes. */
  MaxNodesExceeded: 'MaxNodesExceeded',
  /** No single site holds the gang. */
  SameSiteUnsatisfied: 'SameSiteUnsatisfied',
  /** No set of nodes meeting the bandwidth/RTT limits between every pair holds the gang. */
  InterconnectUnsatisfied: 'InterconnectUnsatisfied',
  NoGang: 'NoGang',
} as const;

/**
 * The default gang assembly: per model group, the bounded search of `GangSearch` (single host, site
 * fills per speed tier, a beam over nearby sites, local improvement). On failure it explains which
 * constraint stood in the way, with numbers.
 */
export const gangAssembler: AssemblerPlugin = {
  name: GANG_ASSEMBLY,
  assemble: (ctx) => {
    const limits = shapeLimits(ctx.request);
    const out = new Collector(Math.max(4, ctx.options.alternatives + 1));
    const facts: SearchFacts = { largestSite: 0, largestConnected: 0, largestWithinMaxNodes: 0 };
    const groups = modelGroups(ctx.pool.hosts, ctx.request.mixedModels);
    // Only the pool's providers are ever looked up.
    const providerLeft = new Float64Array(ctx.inventory.providers.length);
    for (const h of ctx.pool.hosts) {
      providerLeft[h.providerIndex] =
        (h.provider.policy.maxGpusPerJob ?? Infinity) - (ctx.providerUsed.get(h.providerIndex) ?? 0);
    }
    for (const g of groups) {
      if (g.usable < limits.total) continue;
      const search = new GangSearch(ctx, g.hosts, limits, out, providerLeft);
      search.run();
      facts.largestSite = Math.max(facts.largestSite, search.facts.largestSite);
      facts.largestConnected = Math.max(facts.largestConnected, search.facts.largestConnected);
      facts.largestWithinMaxNodes = Math.max(facts.largestWithinMaxNodes, search.facts.largestWithinMaxNodes);
    }
    if (out.gangs.length > 0) return { gangs: out.gangs, failure: null };
    return { gangs: [], failure: diagnose(ctx, limits, groups, facts) };
  },
};

/** GPUs a group can give under the per-node and provider limits, and the fewest nodes that reach the total. */
const capacity = (ctx: AssemblyContext, hosts: readonly PoolHost[], l: ShapeLimits) => {
  const caps = hosts
    .map((h) => {
      let c = Math.min(h.gpus.length, l.perNodeMax);
      c -= c % l.step;
      return { h, c: c >= l.perNodeMin ? c : 0 };
    })
    .filter((x) => x.c > 0)
    .sort((a, b) => b.c - a.c || a.h.hostIndex - b.h.hostIndex);
  const left = new Map<number, number>();
  let total = 0;
  let nodes = 0;
  let fewest: number | null = null;
  for (const { h, c: raw } of caps) {
    const provider = ctx.inventory.providers[h.providerIndex]!;
    const budget =
      left.get(h.providerIndex) ??
      (provider.policy.maxGpusPerJob ?? Infinity) - (ctx.providerUsed.get(h.providerIndex) ?? 0);
    let c = Math.min(raw, budget);
    c -= c % l.step;
    if (c < l.perNodeMin) continue;
    left.set(h.providerIndex, budget - c);
    total += c;
    nodes++;
    if (fewest === null && total >= l.total) fewest = nodes;
  }
  return { total, fewest };
};

/**
 * The measured pair of the pool's hosts that came closest to the bounds without meeting them
 * (lowest RTT over an RTT bound, else highest bandwidth under a bandwidth bound), as a clause of
 * the reason: a gang that cannot be placed says which measured figure stood in the way. Only
 * measured pairs are looked at (a walk over the measurements, not over every pair of hosts).
 */
const blockingPair = (ctx: AssemblyContext, ic: InterconnectRequirement): string => {
  const inv = ctx.inventory;
  if (inv.hostLinks.size === 0) return inv.estimatesMeetBounds ? '' : '; no pair of them is measured yet';
  const inPool = new Set(ctx.pool.hosts.map((h) => h.hostIndex));
  const n = inv.hosts.length;
  let best: { a: number; b: number; link: Link } | null = null;
  const closer = (x: Link, y: Link): boolean =>
    ic.maxRttUs !== null && x.rttUs !== y.rttUs ? x.rttUs < y.rttUs : x.bandwidthBps > y.bandwidthBps;
  for (const key of inv.hostLinks.keys()) {
    const a = Math.floor(key / n);
    const b = key % n;
    if (!inPool.has(a) || !inPool.has(b)) continue;
    const link = hostLink(inv, a, b);
    if (meetsBounds(inv, link, ic.minBandwidthBps, ic.maxRttUs)) continue;
    if (best === null || closer(link, best.link)) best = { a, b, link };
  }
  if (best === null) return '';
  const figures = [
    ic.maxRttUs === null ? null : `${formatUs(best.link.rttUs)} RTT`,
    ic.minBandwidthBps === null
      ? null
      : `${formatBps(best.link.bandwidthBps)}${best.link.bandwidthMeasured ? '' : ' (bandwidth not measured)'}`,
  ]
    .filter((p) => p !== null)
    .join(', ');
  return `; the nearest measured pair, ${inv.hosts[best.a]!.id} ↔ ${inv.hosts[best.b]!.id}, has ${figures}`;
};

const diagnose = (
  ctx: AssemblyContext,
  l: ShapeLimits,
  groups: readonly ModelGroup[],
  facts: SearchFacts,
): Status => {
  const fail = (reason: string, message: string) => unschedulable(GANG_ASSEMBLY, reason, message);
  const pool = ctx.pool;
  if (pool.usableGpus < l.total) {
    if (pool.usableGpus + pool.gpusOnSmallHosts < l.total) {
      return fail(GangAssemblyReason.TooFewGpus, `only ${pool.usableGpus + pool.gpusOnSmallHosts} are free`);
    }
    return fail(
      GangAssemblyReason.PerNodeLimits,
      pool.minUsable >= l.total
        ? `no node has ${l.total} of them free`
        : `only ${pool.usableGpus} of them are on nodes with at least ${pool.minUsable} free`,
    );
  }
  const largest = [...groups].sort((a, b) => b.usable - a.usable)[0]!;
  if (largest.usable < l.total) {
    return fail(
      GangAssemblyReason.NoSingleModel,
      `no single model has ${l.total} (most: ${largest.model} with ${largest.usable}) and the job does not mix models`,
    );
  }
  const viable = groups.filter((g) => g.usable >= l.total).map((g) => capacity(ctx, g.hosts, l));
  const bestTotal = Math.max(...viable.map((v) => v.total));
  if (bestTotal < l.total) {
    return fail(
      GangAssemblyReason.PerNodeLimits,
      `per-node limits leave ${bestTotal}: a node takes ${l.perNodeMin}–${l.perNodeMax} GPUs in ranks of ${l.step}, within its provider's per-job cap`,
    );
  }
  const fewest = Math.min(...viable.map((v) => v.fewest ?? Infinity));
  if (fewest > l.maxNodes) {
    return fail(
      GangAssemblyReason.MaxNodesExceeded,
      `the best set needs ${fewest} nodes but max_nodes is ${l.maxNodes}`,
    );
  }
  const ic = ctx.request.interconnect;
  if (ic.sameSite && facts.largestSite < l.total) {
    return fail(
      GangAssemblyReason.SameSiteUnsatisfied,
      `no single site has ${l.total}: the largest offers ${facts.largestSite}`,
    );
  }
  if (ic.minBandwidthBps !== null || ic.maxRttUs !== null) {
    const limits = [
      ic.maxRttUs === null ? null : `within ${formatUs(ic.maxRttUs)} RTT`,
      ic.minBandwidthBps === null ? null : `at ≥ ${formatBps(ic.minBandwidthBps)}`,
    ]
      .filter((p) => p !== null)
      .join(' and ');
    return fail(
      GangAssemblyReason.InterconnectUnsatisfied,
      `no set of nodes ${limits} of each other holds ${l.total}: the largest found holds ${facts.largestConnected}${blockingPair(ctx, ic)}`,
    );
  }
  return fail(GangAssemblyReason.NoGang, 'no set of nodes satisfies every constraint');
};
