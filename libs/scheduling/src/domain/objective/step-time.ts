import type { StepTimePrediction } from '../model/placement';
import type { Precision } from '../model/precision';
import type { WorkloadModel } from '../model/request';
import { type CompiledGpu, type Inventory, memoized } from '../snapshot/cluster-snapshot';
import { hostLink, siteLink } from '../snapshot/network';

/**
 * The objective: the predicted time of one data-parallel training step.
 *
 *   step = compute + intra-host + intra-site + inter-site
 *   compute    = flopPerStepPerGpu / slowest chosen GPU's FLOP/s        (synchronous: the slowest GPU sets the pace)
 *   intra-host = max over nodes with g ≥ 2 GPUs of  2(g−1)/g · S / B_host + 2(g−1) · ℓ_host      (ring inside the host)
 *   intra-site = max over sites with k ≥ 2 nodes of 2(k−1)/k · S / B_site + (k−1) · RTT_site       (ring over the site's nodes)
 *   inter-site = with m ≥ 2 sites:                  2(m−1)/m · S / B_wan  + (m−1) · RTT_wan
 *
 * S is the all-reduce size in bits. This is a hierarchical all-reduce: reduce-scatter inside each
 * host, then across the hosts of a site, then across sites, and the mirror-image all-gathers. Each
 * ring level moves 2(n−1)/n of the data over its slowest link and pays 2(n−1) one-way latencies
 * (RTT/2 each). B_site and RTT_site are the smallest bandwidth and largest RTT over pairs of chosen
 * nodes in that site; B_wan and RTT_wan over pairs of chosen nodes in different sites (pessimistic:
 * the ring's worst edge is at most that bad). A node's whole all-reduce share crosses its NIC, so
 * pair bandwidth is capped by both NICs; no parallel-ring bonus is assumed across the wide area.
 */

/** Precisions tried in order when a GPU has no figure for the workload's own. */
const FALLBACK: readonly Precision[] = ['fp16', 'fp32'];
/** A GPU with no usable figure counts as this slow, so it is chosen last rather than never. */
const UNKNOWN_TFLOPS = 0.1;

/** The precision whose figure stands for a GPU's speed at `precision`; null when it has none. */
export const tflopsBasis = (gpu: CompiledGpu, precision: Precision): Precision | null => {
  const own = gpu.tflops[precision];
  if (own !== undefined && own > 0) return precision;
  for (const p of FALLBACK) {
    const v = gpu.tflops[p];
    if (v !== undefined && v > 0) return p;
  }
  return null;
};

/** A GPU's speed for a workload precision, TFLOPS. */
export const gpuTflops = (gpu: CompiledGpu, precision: Precision): number => {
  const basis = tflopsBasis(gpu, precision);
  return basis === null ? UNKNOWN_TFLOPS : gpu.tflops[basis]!;
};

/** Every GPU's speed at a precision, by global GPU index (memoized per inventory). */
export const gpuSpeeds = (inv: Inventory, precision: Precision): Float64Array =>
  memoized(inv, `speeds:${precision}`, () => Float64Array.from(inv.gpus, (g) => gpuTflops(g, precision)));

export const computeUs = (w: WorkloadModel, slowestTflops: number): number =>
  (w.flopPerStepPerGpu / (slowestTflops * 1e12)) * 1e6;

/** One ring all-reduce level over n participants, µs. */
export const ringUs = (bits: number, n: number, bandwidthBps: number, oneWayLatencyUs: number): number =>
  n < 2 ? 0 : ((2 * (n - 1)) / n) * (bits / bandwidthBps) * 1e6 + 2 * (n - 1) * oneWayLatencyUs;

/** A node of a gang for the model: a host index and how many of its GPUs are used. */
export interface ShapeNode {
  readonly host: number;
  readonly gpus: number;
}

/** Pairwise network facts of a set of nodes, grouped the way the model uses them. */
export interface GangNetwork {
  /** Per site index present: node count, slowest pair bandwidth, largest pair RTT (pairs inside the site). */
  readonly sites: ReadonlyMap<
    number,
    { readonly nodes: number; readonly minBandwidthBps: number; readonly maxRttUs: number }
  >;
  /** Over pairs in different sites; Infinity/0 when one site. */
  readonly crossMinBandwidthBps: number;
  readonly crossMaxRttUs: number;
  /** Over all pairs; null for one node. */
  readonly minPairBandwidthBps: number | null;
  readonly maxPairRttUs: number | null;
}

/**
 * The network facts of a set of distinct hosts. Without host-pair measurements and host-specific
 * coordinates every pair between two sites sees the same site link capped by the two NICs, so the
 * worst pair is found per site pair (O(sites²)); otherwise every pair is looked up (O(hosts²)).
 */
export const gangNetwork = (inv: Inventory, hosts: readonly number[]): GangNetwork => {
  const sites = new Map<
    number,
    { nodes: number; minBandwidthBps: number; maxRttUs: number; minNic: number }
  >();
  let hostSpecific = inv.hostLinks.size > 0;
  for (const h of hosts) {
    const host = inv.hosts[h]!;
    if (host.ownCoordinates) hostSpecific = true;
    const s = sites.get(host.siteIndex);
    if (s === undefined) {
      sites.set(host.siteIndex, {
        nodes: 1,
        minBandwidthBps: Infinity,
        maxRttUs: 0,
        minNic: host.nicBandwidthBps,
      });
    } else {
      s.nodes++;
      s.minNic = Math.min(s.minNic, host.nicBandwidthBps);
    }
  }
  let crossMinBandwidthBps = Infinity;
  let crossMaxRttUs = 0;
  if (inv.hostLinks.size === 0) {
    // Inside a site every pair is the LAN capped by the two NICs.
    for (const [si, s] of sites) {
      if (s.nodes < 2) continue;
      const site = inv.sites[si]!;
      s.minBandwidthBps = Math.min(site.lanBandwidthBps, s.minNic);
      s.maxRttUs = site.lanRttUs;
    }
  }
  if (!hostSpecific) {
    const list = [...sites.entries()];
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const [sa, a] = list[i]!;
        const [sb, b] = list[j]!;
        const l = siteLink(inv, sa, sb);
        crossMinBandwidthBps = Math.min(crossMinBandwidthBps, l.bandwidthBps, a.minNic, b.minNic);
        crossMaxRttUs = Math.max(crossMaxRttUs, l.rttUs);
      }
    }
  } else {
    const same = inv.hostLinks.size > 0;
    for (let i = 0; i < hosts.length; i++) {
      const a = hosts[i]!;
      const sa = inv.hosts[a]!.siteIndex;
      for (let j = i + 1; j < hosts.length; j++) {
        const b = hosts[j]!;
        const sb = inv.hosts[b]!.siteIndex;
        if (sa === sb && !same) continue;
        const l = hostLink(inv, a, b);
        if (sa === sb) {
          const s = sites.get(sa)!;
          s.minBandwidthBps = Math.min(s.minBandwidthBps, l.bandwidthBps);
          s.maxRttUs = Math.max(s.maxRttUs, l.rttUs);
        } else {
          crossMinBandwidthBps = Math.min(crossMinBandwidthBps, l.bandwidthBps);
          crossMaxRttUs = Math.max(crossMaxRttUs, l.rttUs);
        }
      }
    }
  }
  let minPair = crossMinBandwidthBps;
  let maxPair = crossMaxRttUs;
  for (const s of sites.values()) {
    if (s.nodes < 2) continue;
    minPair = Math.min(minPair, s.minBandwidthBps);
    maxPair = Math.max(maxPair, s.maxRttUs);
  }
  return {
    sites,
    crossMinBandwidthBps,
    crossMaxRttUs,
    minPairBandwidthBps: hosts.length < 2 ? null : minPair,
    maxPairRttUs: hosts.length < 2 ? null : maxPair,
  };
};

/**
 * The predicted step time of a gang: `nodes` are distinct hosts with their GPU counts;
 * `slowestTflops` is the slowest chosen GPU's speed at the workload's precision.
 */
export const predictStepTime = (
  inv: Inventory,
  workload: WorkloadModel,
  nodes: readonly ShapeNode[],
  slowestTflops: number,
  network: GangNetwork = gangNetwork(
    inv,
    nodes.map((n) => n.host),
  ),
): StepTimePrediction => {
  const bits = workload.allReduceBytes * 8;
  let intraHostUs = 0;
  for (const n of nodes) {
    const link = inv.hosts[n.host]!.intraHost;
    intraHostUs = Math.max(intraHostUs, ringUs(bits, n.gpus, link.bandwidthBps, link.latencyUs));
  }
  let intraSiteUs = 0;
  for (const s of network.sites.values()) {
    if (s.nodes >= 2)
      intraSiteUs = Math.max(intraSiteUs, ringUs(bits, s.nodes, s.minBandwidthBps, s.maxRttUs / 2));
  }
  const m = network.sites.size;
  const interSiteUs = m >= 2 ? ringUs(bits, m, network.crossMinBandwidthBps, network.crossMaxRttUs / 2) : 0;
  const c = computeUs(workload, slowestTflops);
  const commUs = intraHostUs + intraSiteUs + interSiteUs;
  return {
    stepUs: c + commUs,
    computeUs: c,
    commUs,
    intraHostUs,
    intraSiteUs,
    interSiteUs,
    slowestTflops,
  };
};
