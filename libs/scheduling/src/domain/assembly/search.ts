import { computeUs, ringUs } from '../objective/step-time';
import { hostLink, maxCrossSiteBandwidthBps, meetsBounds, siteRttLowerUs } from '../snapshot/network';
import {
  type AssemblyContext,
  type CandidateGang,
  compareKeys,
  evaluateGang,
  gangKey,
  tieOrder,
  type PoolHost,
} from './gang';
import { distribute, type ShapeLimits } from './shape';

/** The best gangs seen so far, best first, without duplicates. */
export class Collector {
  readonly gangs: CandidateGang[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly capacity: number) {}

  accepts(key: readonly number[]): boolean {
    return this.gangs.length < this.capacity || compareKeys(key, this.gangs[this.gangs.length - 1]!.key) < 0;
  }

  add(gang: CandidateGang): void {
    if (!this.accepts(gang.key)) return;
    const signature = gang.members.map((m, i) => `${m.hostIndex}:${gang.counts[i]}`).join(',');
    if (this.seen.has(signature)) return;
    this.seen.add(signature);
    let at = this.gangs.length;
    while (at > 0 && compareKeys(gang.key, this.gangs[at - 1]!.key) < 0) at--;
    this.gangs.splice(at, 0, gang);
    if (this.gangs.length > this.capacity) this.gangs.pop();
  }

  get best(): CandidateGang | undefined {
    return this.gangs[0];
  }
}

/** What the search learned that explains a failure. */
export interface SearchFacts {
  /** Most GPUs any single site offered under the per-node limits. */
  largestSite: number;
  /** Most GPUs a set of nodes satisfying the interconnect constraints reached. */
  largestConnected: number;
  /** Most GPUs a set within max_nodes reached. */
  largestWithinMaxNodes: number;
}

/** The cross-site search keeps partial site sets; each knows its worst RTT to every other site. */
interface SiteState {
  readonly sites: readonly number[];
  readonly capacity: number;
  readonly worstRttUs: number;
  /** Per candidate site (by position in the search's site list): the largest RTT to any site of the state. */
  readonly rttTo: Float64Array;
}

const BRANCH = 3;
const BEAM_DEPTH = 4;
const DROP_TRIES = 16;
const SHIFT_MAX_NODES = 8;
const SWAP_ALTERNATIVES = 12;
const SWAP_MAX_NODES = 16;
const IMPROVE_ROUNDS = 3;
const TIER_GAP = 0.03;

/**
 * The gang search over one pool (one GPU model, or every model when mixing is allowed). Greedy and
 * bounded — no step is exponential:
 * 1. single host: every host that can hold the whole gang;
 * 2. per speed tier (a lower bound on the slowest GPU): fill each site alone, largest hosts first;
 *    then a beam over sets of nearby sites;
 * 3. spread and cheapest fills for those strategies;
 * 4. local improvement of the best gangs: drop a node, swap a node for a better one.
 * Multi-node work is skipped when a lower bound shows it cannot beat the best single host.
 */
export class GangSearch {
  private readonly bySite = new Map<number, number[]>();
  private siteOrder: number[] = [];
  private readonly bits: number;
  /** This search's own best gangs (the shared collector also holds other model groups'). */
  private readonly local = new Collector(2);
  readonly facts: SearchFacts = { largestSite: 0, largestConnected: 0, largestWithinMaxNodes: 0 };

  /**
   * @param providerLeft per provider index: GPUs this job may still take there (its per-job cap
   *   minus what earlier allocations of the ensemble took).
   */
  constructor(
    private readonly ctx: AssemblyContext,
    private readonly hosts: readonly PoolHost[],
    private readonly limits: ShapeLimits,
    private readonly out: Collector,
    private readonly providerLeft: Float64Array,
  ) {
    this.bits = ctx.workload.allReduceBytes * 8;
  }

  run(): void {
    const { total, perNodeMin } = this.limits;
    this.singleHost();
    const placement = this.ctx.request.placement;
    const multiPossible = total >= 2 * perNodeMin && this.limits.maxNodes >= 2;
    if (!multiPossible) return;
    this.indexSites();
    if (placement === 'spread') this.spreadFill();
    if (placement === 'any') this.cheapestFill();
    let faster = 0;
    for (const h of this.hosts) faster = Math.max(faster, h.speeds[0]!);
    const fastest = faster;
    for (const tier of this.tiers()) {
      // Gangs new at this tier have their slowest GPU below the previous tier (or the fastest GPU).
      if (!this.multiHostCanWin(faster)) break;
      faster = tier;
      const caps = this.capsAt(tier);
      this.siteFill(caps);
      if (!this.ctx.request.interconnect.sameSite && this.crossSiteCanWin(faster)) this.crossSite(caps);
    }
    for (const g of [...this.local.gangs]) {
      if (g.members.length > 1 || placement !== 'pack' || this.multiHostCanWin(fastest)) this.improve(g);
    }
  }

  private offer(gang: CandidateGang): void {
    this.local.add(gang);
    this.out.add(gang);
  }

  private indexSites(): void {
    this.hosts.forEach((h, i) => {
      const list = this.bySite.get(h.siteIndex);
      if (list === undefined) this.bySite.set(h.siteIndex, [i]);
      else list.push(i);
    });
    this.siteOrder = [...this.bySite.keys()].sort((a, b) => a - b);
  }

  /** The most GPUs a host can give: usable ones at least `tier` fast, within the per-node and provider limits. */
  private cap(h: PoolHost, tier: number): number {
    let c = 0;
    while (c < h.speeds.length && h.speeds[c]! >= tier) c++;
    const { perNodeMax, perNodeMin, step } = this.limits;
    c = Math.min(c, perNodeMax, this.providerLeft[h.providerIndex]!);
    c -= c % step;
    return c >= perNodeMin ? c : 0;
  }

  private capsAt(tier: number): Int32Array {
    return Int32Array.from(this.hosts, (h) => this.cap(h, tier));
  }

  /**
   * Speed tiers: the slowest chosen GPU's speed is searched at a few thresholds, fastest first,
   * starting where enough GPUs are at least that fast, each ≥ 3% below the previous, always ending
   * with "any speed".
   */
  private tiers(): number[] {
    const counts = new Map<number, { speed: number; n: number }>();
    let slowest = Infinity;
    for (const h of this.hosts) {
      for (const s of h.speeds) {
        const b = Math.round(Math.log(s) / Math.log1p(0.01));
        const e = counts.get(b);
        if (e === undefined) counts.set(b, { speed: s, n: 1 });
        else {
          e.n++;
          e.speed = Math.min(e.speed, s);
        }
        slowest = Math.min(slowest, s);
      }
    }
    const buckets = [...counts.values()].sort((a, b) => b.speed - a.speed);
    const tiers: number[] = [];
    let cumulative = 0;
    for (const b of buckets) {
      cumulative += b.n;
      if (cumulative < this.limits.total) continue;
      const last = tiers[tiers.length - 1];
      if (last === undefined || b.speed < last * (1 - TIER_GAP)) tiers.push(b.speed);
    }
    const max = Math.max(1, this.ctx.options.maxTiers);
    if (tiers.length > max) tiers.splice(max - 1, tiers.length - max + 1, slowest);
    else if (tiers.length > 0 && tiers[tiers.length - 1] !== slowest) tiers[tiers.length - 1] = slowest;
    return tiers.length === 0 ? [slowest] : tiers;
  }

  /**
   * Whether a multi-node gang whose slowest GPU is at most `fastest` could beat the best gang so far:
   * a lower bound is that GPU's compute plus a ring of two nodes over the fastest NIC.
   */
  private multiHostCanWin(fastest: number): boolean {
    const best = this.out.best;
    if (best === undefined || this.ctx.request.placement !== 'pack') return true;
    const lower = computeUs(this.ctx.workload, fastest) + (this.bits / this.maxNic()) * 1e6;
    return lower < best.prediction.stepUs * (1 + this.ctx.options.stepTimeTolerance);
  }

  /** As `multiHostCanWin`, for gangs over several sites: their wide-area ring is at least one all-reduce over the fastest cross-site link. */
  private crossSiteCanWin(fastest: number): boolean {
    const best = this.out.best;
    if (best === undefined || this.ctx.request.placement !== 'pack') return true;
    const wan = Math.min(maxCrossSiteBandwidthBps(this.ctx.inventory), this.maxNic());
    const lower = computeUs(this.ctx.workload, fastest) + (this.bits / wan) * 1e6;
    return lower < best.prediction.stepUs * (1 + this.ctx.options.stepTimeTolerance);
  }

  private maxNic(): number {
    let maxNic = 0;
    for (const h of this.hosts) if (h.nicBandwidthBps > maxNic) maxNic = h.nicBandwidthBps;
    return maxNic;
  }

  private singleHost(): void {
    const { total, perNodeMin } = this.limits;
    if (total < perNodeMin) return;
    const { request, workload, options } = this.ctx;
    const bits = this.bits;
    for (const h of this.hosts) {
      if (this.cap(h, 0) < total) continue;
      const link = h.host.intraHost;
      const step =
        computeUs(workload, h.speeds[total - 1]!) + ringUs(bits, total, link.bandwidthBps, link.latencyUs);
      let price = 0;
      for (let j = 0; j < total; j++) price += h.prices[j]!;
      const key = gangKey(
        request.placement,
        options.stepTimeTolerance,
        step,
        price,
        h.score,
        1,
        h.reliability,
        h.tie,
      );
      if (this.out.accepts(key) || this.local.accepts(key)) this.offer(evaluateGang(this.ctx, [h], [total]));
    }
  }

  /** Each site alone: its largest hosts first until the gang is full. */
  private siteFill(caps: Int32Array): void {
    for (const site of this.siteOrder) {
      const members = this.bySite.get(site)!.filter((i) => caps[i]! > 0);
      let capacity = 0;
      for (const i of members) capacity += caps[i]!;
      this.facts.largestSite = Math.max(this.facts.largestSite, capacity);
      if (capacity < this.limits.total) {
        if (this.lanMeetsInterconnect(site))
          this.facts.largestConnected = Math.max(this.facts.largestConnected, capacity);
        continue;
      }
      members.sort((a, b) => this.byCapacity(caps, a, b));
      this.fill(members, caps);
    }
  }

  /** Whether a site's LAN meets the interconnect limits (for explanations: a site is one connected set). */
  private lanMeetsInterconnect(site: number): boolean {
    const ic = this.ctx.request.interconnect;
    const s = this.ctx.inventory.sites[site]!;
    return (
      (ic.maxRttUs === null || s.lanRttUs <= ic.maxRttUs) &&
      (ic.minBandwidthBps === null || s.lanBandwidthBps >= ic.minBandwidthBps)
    );
  }

  private byCapacity(caps: Int32Array, a: number, b: number): number {
    const ha = this.hosts[a]!;
    const hb = this.hosts[b]!;
    return (
      caps[b]! - caps[a]! ||
      hb.nicBandwidthBps - ha.nicBandwidthBps ||
      hb.score - ha.score ||
      tieOrder(ha, hb) ||
      a - b
    );
  }

  /**
   * A beam over sets of sites: from the largest sites, add the nearest site (by the worst RTT to
   * any site already in the set) a few ways per step, keep the best `beamWidth` sets. After
   * `BEAM_DEPTH` steps a set grows greedily, nearest first, until it holds the gang. A pair of
   * sites is as near as its closest measured host pair (`siteRttLowerUs`); `fill` then checks every
   * chosen pair of hosts.
   */
  private crossSite(caps: Int32Array): void {
    const inv = this.ctx.inventory;
    const siteCap = new Map<number, number>();
    for (const site of this.siteOrder) {
      let c = 0;
      for (const i of this.bySite.get(site)!) c += caps[i]!;
      if (c > 0) siteCap.set(site, c);
    }
    const sites = [...siteCap.keys()];
    if (sites.length < 2) return;
    // RTT tables are indexed by position in `sites`, not by site index (keeps them small).
    const slot = new Map<number, number>(sites.map((site, i) => [site, i]));
    let all = 0;
    for (const c of siteCap.values()) all += c;
    if (all < this.limits.total) return;
    const maxRtt = this.ctx.request.interconnect.maxRttUs ?? Infinity;
    const width = Math.max(1, this.ctx.options.beamWidth);
    const stateOf = (prev: SiteState | null, site: number): SiteState => {
      if (prev !== null) {
        // For explanations: the site set is within the RTT limit (site-level estimate).
        this.facts.largestConnected = Math.max(
          this.facts.largestConnected,
          prev.capacity + siteCap.get(site)!,
        );
      }
      const rttTo = prev === null ? new Float64Array(sites.length) : prev.rttTo.slice();
      for (let i = 0; i < sites.length; i++) {
        const r = siteRttLowerUs(inv, site, sites[i]!);
        if (r > rttTo[i]!) rttTo[i] = r;
      }
      return {
        sites: prev === null ? [site] : [...prev.sites, site],
        capacity: (prev?.capacity ?? 0) + siteCap.get(site)!,
        worstRttUs: prev === null ? 0 : Math.max(prev.worstRttUs, prev.rttTo[slot.get(site)!]!),
        rttTo,
      };
    };
    /** The `n` nearest sites not in the state, within the RTT limit (linear selection, no sort). */
    const nearest = (state: SiteState, n: number): number[] => {
      const best: number[] = [];
      const rtt = (site: number): number => state.rttTo[slot.get(site)!]!;
      for (const s of sites) {
        const r = rtt(s);
        if (r > maxRtt || state.sites.includes(s)) continue;
        let at = best.length;
        while (at > 0) {
          const o = best[at - 1]!;
          const ro = rtt(o);
          if (
            ro < r ||
            (ro === r && (siteCap.get(o)! > siteCap.get(s)! || (siteCap.get(o) === siteCap.get(s) && o < s)))
          )
            break;
          at--;
        }
        if (at < n) {
          best.splice(at, 0, s);
          if (best.length > n) best.pop();
        }
      }
      return best;
    };
    const complete = (state: SiteState): void => {
      let current = state;
      while (current.sites.length <= this.limits.maxNodes) {
        if (current.capacity >= this.limits.total && this.fillSites(current.sites, caps)) return;
        const next = nearest(current, 1)[0];
        if (next === undefined) return;
        current = stateOf(current, next);
      }
    };
    let beam = [...sites]
      .sort((a, b) => siteCap.get(b)! - siteCap.get(a)! || a - b)
      .slice(0, width)
      .map((s) => stateOf(null, s));
    const seen = new Set<string>();
    for (let depth = 0; beam.length > 0; depth++) {
      if (depth >= BEAM_DEPTH) {
        for (const state of beam) complete(state);
        return;
      }
      const next: SiteState[] = [];
      for (const state of beam) {
        // A set that holds enough GPUs may still need more nodes than allowed: then it grows on.
        if (state.capacity >= this.limits.total && this.fillSites(state.sites, caps)) continue;
        if (state.sites.length >= this.limits.maxNodes) continue;
        for (const s of nearest(state, BRANCH)) {
          const key = [...state.sites, s].sort((a, b) => a - b).join(',');
          if (seen.has(key)) continue;
          seen.add(key);
          next.push(stateOf(state, s));
        }
      }
      beam = next.sort((a, b) => a.worstRttUs - b.worstRttUs || b.capacity - a.capacity).slice(0, width);
    }
  }

  /** Fills from a set of sites two ways: site by site (least traffic across sites), and largest hosts first (fewest nodes). */
  private fillSites(sites: readonly number[], caps: Int32Array): boolean {
    const bySiteOrder = sites.flatMap((s) =>
      this.bySite
        .get(s)!
        .filter((i) => caps[i]! > 0)
        .sort((a, b) => this.byCapacity(caps, a, b)),
    );
    const a = this.fill(bySiteOrder, caps);
    const b = this.fill(
      [...bySiteOrder].sort((x, y) => this.byCapacity(caps, x, y)),
      caps,
    );
    return a || b;
  }

  /** Spread: as many nodes as allowed, nearest sites first from each of the largest sites. */
  private spreadFill(): void {
    const { total, perNodeMin, maxNodes } = this.limits;
    const target = Math.min(maxNodes, Math.floor(total / perNodeMin));
    const caps = this.capsAt(0);
    const inv = this.ctx.inventory;
    const siteCap = (s: number): number => this.bySite.get(s)!.reduce((n, i) => n + caps[i]!, 0);
    const seeds = [...this.siteOrder]
      .sort((a, b) => siteCap(b) - siteCap(a) || a - b)
      .slice(0, this.ctx.options.beamWidth);
    for (const seed of seeds) {
      const order = [...this.siteOrder]
        .sort((a, b) => siteRttLowerUs(inv, seed, a) - siteRttLowerUs(inv, seed, b) || a - b)
        .flatMap((s) =>
          this.bySite
            .get(s)!
            .filter((i) => caps[i]! > 0)
            .sort(
              (a, b) =>
                this.hosts[b]!.score - this.hosts[a]!.score || tieOrder(this.hosts[a]!, this.hosts[b]!),
            ),
        );
      this.fill(order, caps, target);
    }
  }

  /** Any: cheapest GPUs first. */
  private cheapestFill(): void {
    const caps = this.capsAt(0);
    const order = this.hosts
      .map((_, i) => i)
      .filter((i) => caps[i]! > 0)
      .sort((a, b) => {
        const ha = this.hosts[a]!;
        const hb = this.hosts[b]!;
        return (
          ha.prices[0]! - hb.prices[0]! || caps[b]! - caps[a]! || hb.score - ha.score || tieOrder(ha, hb)
        );
      });
    this.fill(order, caps);
  }

  /**
   * Takes hosts in order while they fit the constraints (max nodes, provider caps, interconnect
   * with every node already taken) until the gang is full — or, for spread, until `nodes` nodes.
   */
  private fill(order: readonly number[], caps: Int32Array, nodes?: number): boolean {
    const { total, maxNodes } = this.limits;
    const members: PoolHost[] = [];
    const memberCaps: number[] = [];
    const taken = new Map<number, number>();
    let sum = 0;
    for (const i of order) {
      if (nodes === undefined ? sum >= total : members.length >= nodes) break;
      if (members.length >= maxNodes) break;
      const h = this.hosts[i]!;
      let c = Math.min(caps[i]!, this.providerLeft[h.providerIndex]! - (taken.get(h.providerIndex) ?? 0));
      c -= c % this.limits.step;
      if (c < this.limits.perNodeMin) continue;
      if (!this.connects(h, members)) continue;
      members.push(h);
      memberCaps.push(c);
      taken.set(h.providerIndex, (taken.get(h.providerIndex) ?? 0) + c);
      sum += c;
    }
    this.facts.largestConnected = Math.max(this.facts.largestConnected, sum);
    if (members.length <= maxNodes)
      this.facts.largestWithinMaxNodes = Math.max(this.facts.largestWithinMaxNodes, sum);
    if (sum < total) return false;
    return this.finish(members, memberCaps) !== null;
  }

  /** Whether a host meets the interconnect constraints with every chosen node. */
  private connects(h: PoolHost, members: readonly PoolHost[]): boolean {
    const ic = this.ctx.request.interconnect;
    if (members.length === 0) return true;
    if (ic.sameSite && members[0]!.siteIndex !== h.siteIndex) return false;
    if (ic.minBandwidthBps === null && ic.maxRttUs === null) return true;
    const inv = this.ctx.inventory;
    for (const m of members) {
      const l = hostLink(inv, h.hostIndex, m.hostIndex);
      if (!meetsBounds(inv, l, ic.minBandwidthBps, ic.maxRttUs)) return false;
    }
    return true;
  }

  private finish(members: readonly PoolHost[], caps: readonly number[]): CandidateGang | null {
    const counts = this.split(members, caps);
    if (counts === null) return null;
    const gang = evaluateGang(this.ctx, members, counts);
    this.offer(gang);
    return gang;
  }

  private split(members: readonly PoolHost[], caps: readonly number[]): number[] | null {
    const { total, perNodeMin, step } = this.limits;
    const bits = this.bits;
    return distribute(total, caps, perNodeMin, step, (i, n) => {
      const link = members[i]!.host.intraHost;
      return ringUs(bits, n, link.bandwidthBps, link.latencyUs);
    });
  }

  /**
   * Local improvement: drop a node (its GPUs go to the others) or swap one for a host nearby, while
   * the gang gets better; a few rounds at most.
   */
  private improve(start: CandidateGang): void {
    let current = start;
    const { maxNodes, step, perNodeMin } = this.limits;
    for (let round = 0; round < IMPROVE_ROUNDS; round++) {
      const tier = current.prediction.slowestTflops;
      const sets: PoolHost[][] = [];
      const k = current.members.length;
      if (k > 1) {
        // Dropping a node with few GPUs is the likeliest win: try the smallest ones.
        const order = current.counts
          .map((n, i) => [n, i] as const)
          .sort((a, b) => a[0] - b[0] || a[1] - b[1])
          .slice(0, DROP_TRIES);
        for (const [, i] of order) sets.push(current.members.filter((_, j) => j !== i));
      }
      if (k <= SWAP_MAX_NODES) {
        const alternatives = this.alternatives(current, tier);
        for (const alt of alternatives) {
          if (k < maxNodes && this.connects(alt, current.members)) sets.push([...current.members, alt]);
          for (let i = 0; i < k; i++) {
            const others = current.members.filter((_, j) => j !== i);
            if (this.connects(alt, others)) sets.push([...others, alt]);
          }
        }
      }
      let best = current;
      const consider = (members: readonly PoolHost[], counts: readonly number[]): void => {
        const g = evaluateGang(this.ctx, members, counts);
        this.offer(g);
        if (compareKeys(g.key, best.key) < 0) best = g;
      };
      for (const members of sets) {
        // At the gang's own speed tier (keeps its slowest GPU), and at any speed (more room).
        for (const t of [tier, 0]) {
          const caps = this.capsFor(members, t);
          if (caps === null) continue;
          const counts = this.split(members, caps);
          if (counts !== null) consider(members, counts);
        }
      }
      // Move one rank between two nodes: trades intra-host time against the slowest GPU.
      if (k > 1 && k <= SHIFT_MAX_NODES) {
        const caps = this.capsFor(current.members, 0);
        for (let i = 0; caps !== null && i < k; i++) {
          for (let j = 0; j < k; j++) {
            if (i === j || current.counts[i]! - step < perNodeMin || current.counts[j]! + step > caps[j]!)
              continue;
            const counts = [...current.counts];
            counts[i] = counts[i]! - step;
            counts[j] = counts[j]! + step;
            consider(current.members, counts);
          }
        }
      }
      if (best === current) return;
      current = best;
    }
  }

  /** Hosts near a gang (its sites, then the nearest other sites) that could replace one of its nodes. */
  private alternatives(g: CandidateGang, tier: number): PoolHost[] {
    const inv = this.ctx.inventory;
    const inGang = new Set(g.members.map((m) => m.hostIndex));
    const gangSites = [...new Set(g.members.map((m) => m.siteIndex))];
    const near = this.siteOrder
      .filter((s) => !gangSites.includes(s))
      .map((s) => ({ s, rtt: Math.min(...gangSites.map((gs) => siteRttLowerUs(inv, gs, s))) }))
      .sort((a, b) => a.rtt - b.rtt || a.s - b.s)
      .slice(0, 2)
      .map((x) => x.s);
    const out: { h: PoolHost; cap: number }[] = [];
    for (const s of [...gangSites, ...near]) {
      for (const i of this.bySite.get(s) ?? []) {
        const h = this.hosts[i]!;
        if (inGang.has(h.hostIndex)) continue;
        const cap = this.cap(h, tier);
        if (cap > 0) out.push({ h, cap });
      }
    }
    return out
      .sort(
        (a, b) =>
          b.cap - a.cap || b.h.speeds[0]! - a.h.speeds[0]! || b.h.score - a.h.score || tieOrder(a.h, b.h),
      )
      .slice(0, SWAP_ALTERNATIVES)
      .map((x) => x.h);
  }

  /** Per-node capacities at a tier, sharing each provider's per-job cap among its nodes in order; null if a node gets too few. */
  private capsFor(members: readonly PoolHost[], tier: number): number[] | null {
    if (members.length > this.limits.maxNodes) return null;
    const taken = new Map<number, number>();
    const caps: number[] = [];
    for (const m of members) {
      let c = Math.min(
        this.cap(m, tier),
        this.providerLeft[m.providerIndex]! - (taken.get(m.providerIndex) ?? 0),
      );
      c -= c % this.limits.step;
      if (c < this.limits.perNodeMin) return null;
      taken.set(m.providerIndex, (taken.get(m.providerIndex) ?? 0) + c);
      caps.push(c);
    }
    return caps;
  }
}
