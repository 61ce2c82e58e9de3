import { type CandidateGang, compareKeys } from '../assembly/gang';
import {
  type Alternative,
  type AllocationExplanation,
  type FigureSource,
  type GpuFigure,
  type LinkFigure,
  type LossReason,
  MAX_ALTERNATIVES,
  MAX_GPU_FIGURES,
  MAX_LINK_FIGURES,
} from '../model/explanation';
import type { AllocationPlacement } from '../model/placement';
import type { InterconnectRequirement, PlacementStrategy } from '../model/request';
import { formatBps, formatUs } from '../model/units';
import { gpuTflops, tflopsBasis } from '../objective/step-time';
import { hostPairKey, type Inventory, sitePairKey, type StoredLink } from '../snapshot/cluster-snapshot';
import { hostLink, type Link } from '../snapshot/network';
import type { RequestContext } from './context';

/** What one placed allocation's explanation is built from: only references the search kept anyway. */
export interface ExplainInput {
  readonly ctx: RequestContext;
  readonly placement: AllocationPlacement;
  readonly chosen: CandidateGang;
  /** Gangs the search ranked (the chosen one among them, or not: an ensemble may pick a lower one). */
  readonly rivals: readonly CandidateGang[];
  /** Gangs a search without the interconnect requirement found; those breaking it are alternatives. */
  readonly unconstrained: readonly CandidateGang[];
  readonly stepTimeTolerance: number;
}

/** Per strategy: what each position of the comparison key (`gangKey`) stands for. */
const KEY_MEANING: Record<PlacementStrategy, readonly Exclude<LossReason, 'constraint' | 'ensemble'>[]> = {
  pack: ['slower', 'pricier', 'lower-score', 'more-nodes', 'tie-break', 'tie-break'],
  spread: ['fewer-nodes', 'slower', 'pricier', 'lower-score', 'tie-break', 'tie-break'],
  any: ['pricier', 'slower', 'lower-score', 'more-nodes', 'tie-break', 'tie-break'],
};

/**
 * A gang's node set: each host with its GPU count, in host order. Two gangs on the same nodes that
 * differ only in which GPUs of a host (or in member order) are one alternative to a person.
 */
const nodeSet = (g: CandidateGang): string =>
  g.members
    .map((m, i) => [m.hostIndex, g.counts[i]!] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([host, count]) => `${host}:${count}`)
    .join(',');

const percent = (value: number, base: number): string =>
  base > 0 ? `${value >= base ? '+' : '−'}${Math.abs(Math.round(((value - base) / base) * 100))}%` : '';

/** The figures behind one pair of chosen hosts (both at once: the objective used exactly these). */
const linkFigure = (inv: Inventory, a: number, b: number): LinkFigure => {
  const ha = inv.hosts[a]!;
  const hb = inv.hosts[b]!;
  const link: Link = hostLink(inv, a, b);
  let stored: StoredLink | undefined;
  let raw = inv.defaultWanBandwidthBps;
  let rttSource: FigureSource = 'assumed';
  let bandwidthSource: FigureSource = 'assumed';
  let estimateError: number | null = null;
  switch (link.source) {
    case 'host-measured':
      stored = inv.hostLinks.get(hostPairKey(inv, a, b));
      raw = stored!.bandwidthBps;
      rttSource = bandwidthSource = 'measured';
      break;
    case 'site-measured':
      stored = inv.siteLinks.get(sitePairKey(inv, ha.siteIndex, hb.siteIndex));
      raw = stored!.bandwidthBps;
      rttSource = bandwidthSource = 'measured';
      break;
    case 'site-lan':
      raw = inv.sites[ha.siteIndex]!.lanBandwidthBps;
      rttSource = bandwidthSource = 'lan';
      break;
    case 'coordinates':
      rttSource = 'estimated';
      estimateError =
        ha.coordinatesError === null || hb.coordinatesError === null
          ? null
          : Math.max(ha.coordinatesError, hb.coordinatesError);
      break;
    case 'default':
      break;
    default: {
      const never: never = link.source;
      return never;
    }
  }
  const [first, second] = ha.id < hb.id ? [ha, hb] : [hb, ha];
  return {
    a: first.id,
    b: second.id,
    scope: ha.siteIndex === hb.siteIndex ? 'intra-site' : 'inter-site',
    rttUs: link.rttUs,
    rttSource,
    bandwidthBps: link.bandwidthBps,
    bandwidthSource,
    cappedByNic: link.bandwidthBps < raw,
    basis: link.source,
    measuredAt: stored?.measuredAt ?? null,
    relayed: stored?.relayed ?? false,
    estimateError,
  };
};

/** Every pair of distinct hosts, wide-area first, then by RTT (largest first); bounded. */
const pairFigures = (inv: Inventory, hosts: readonly number[], limit: number): LinkFigure[] => {
  const out: LinkFigure[] = [];
  for (let i = 0; i < hosts.length; i++)
    for (let j = i + 1; j < hosts.length; j++) out.push(linkFigure(inv, hosts[i]!, hosts[j]!));
  out.sort(
    (x, y) =>
      (x.scope === y.scope ? 0 : x.scope === 'inter-site' ? -1 : 1) ||
      y.rttUs - x.rttUs ||
      x.bandwidthBps - y.bandwidthBps ||
      (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0),
  );
  return out.slice(0, limit);
};

const gpuFigures = (ctx: RequestContext, placement: AllocationPlacement): GpuFigure[] => {
  const inv = ctx.inventory;
  const precision = ctx.workload.precision;
  const figures = placement.nodes.flatMap((n) =>
    n.gpuUuids.map((uuid): Omit<GpuFigure, 'slowest'> => {
      const gpu = inv.gpus[inv.gpuByUuid.get(uuid)!]!;
      const basis = tflopsBasis(gpu, precision);
      return {
        providerId: n.providerId,
        hostId: n.hostId,
        gpuUuid: uuid,
        model: gpu.model,
        precision: basis ?? precision,
        tflops: gpuTflops(gpu, precision),
        source: basis === null ? 'assumed' : gpu.tflopsMeasured ? 'measured' : 'reference',
        measuredAt: basis === null ? null : gpu.tflopsMeasuredAt,
      };
    }),
  );
  figures.sort((x, y) => x.tflops - y.tflops || (x.gpuUuid < y.gpuUuid ? -1 : 1));
  return figures.map((f, i) => ({ ...f, slowest: i === 0 }));
};

/** The first requirement a gang breaks, in words naming the pair and its figure; null when none. */
const violation = (inv: Inventory, ic: InterconnectRequirement, gang: CandidateGang): string | null => {
  if (gang.members.length < 2) return null;
  if (ic.sameSite && gang.network.sites.size > 1)
    return `spans ${gang.network.sites.size} sites; same_site asked for one`;
  const hosts = gang.members.map((m) => m.hostIndex);
  const pairs = pairFigures(inv, hosts, Infinity);
  if (ic.maxRttUs !== null) {
    const worst = pairs.reduce((w, p) => (p.rttUs > w.rttUs ? p : w), pairs[0]!);
    if (worst.rttUs > ic.maxRttUs)
      return `RTT ${formatUs(worst.rttUs)} (${worst.rttSource}) between ${worst.a} and ${worst.b} exceeds max_rtt ${formatUs(ic.maxRttUs)}`;
  }
  if (ic.minBandwidthBps !== null) {
    const worst = pairs.reduce((w, p) => (p.bandwidthBps < w.bandwidthBps ? p : w), pairs[0]!);
    if (worst.bandwidthBps < ic.minBandwidthBps)
      return `bandwidth ${formatBps(worst.bandwidthBps)} (${worst.bandwidthSource}) between ${worst.a} and ${worst.b} is below min_bandwidth ${formatBps(ic.minBandwidthBps)}`;
  }
  return null;
};

const lossMessage = (
  lostOn: Exclude<LossReason, 'constraint'>,
  rival: CandidateGang,
  chosen: CandidateGang,
  tolerance: number,
): string => {
  const r = rival.prediction;
  const c = chosen.prediction;
  const asFast = `as fast (within ${+(tolerance * 100).toFixed(1)}%)`;
  switch (lostOn) {
    case 'slower':
      return `slower: ${formatUs(r.stepUs)} per step vs ${formatUs(c.stepUs)} (${percent(r.stepUs, c.stepUs)}; compute ${formatUs(r.computeUs)} vs ${formatUs(c.computeUs)}, communication ${formatUs(r.commUs)} vs ${formatUs(c.commUs)})`;
    case 'pricier':
      return `pricier: ${rival.pricePerHourMinor} vs ${chosen.pricePerHourMinor} minor units per hour (${percent(rival.pricePerHourMinor, chosen.pricePerHourMinor)})`;
    case 'lower-score':
      return `${asFast} and as cheap, but its hosts score lower (${rival.score.toFixed(1)} vs ${chosen.score.toFixed(1)})`;
    case 'more-nodes':
      return `${asFast} and as cheap, but on ${rival.members.length} nodes vs ${chosen.members.length}`;
    case 'fewer-nodes':
      return `spread asked: ${rival.members.length} nodes vs ${chosen.members.length}`;
    case 'tie-break':
      return rival.reliability < chosen.reliability
        ? `equal on every other count, but its providers are less reliable (${rival.reliability.toFixed(2)} vs ${chosen.reliability.toFixed(2)})`
        : 'equal on every count; the seeded tie-break chose the other';
    case 'ensemble':
      return "ranked better alone, but the ensemble's other allocations did not fit beside it";
    default: {
      const never: never = lostOn;
      return never;
    }
  }
};

const alternativeOf = (
  inv: Inventory,
  gang: CandidateGang,
  chosen: CandidateGang,
  lostOn: LossReason,
  message: string,
): Alternative => {
  const nodes = gang.members
    .map((m, i) => ({
      providerId: m.provider.id,
      hostId: m.host.id,
      siteId: inv.sites[m.siteIndex]!.id,
      gpus: gang.counts[i]!,
    }))
    .sort((a, b) =>
      a.siteId < b.siteId
        ? -1
        : a.siteId > b.siteId
          ? 1
          : a.hostId < b.hostId
            ? -1
            : a.hostId > b.hostId
              ? 1
              : 0,
    );
  return {
    nodes,
    sites: gang.network.sites.size,
    gpuCount: gang.gpuCount,
    prediction: gang.prediction,
    pricePerHourMinor: gang.pricePerHourMinor,
    lostOn,
    message,
    stepUsDelta: gang.prediction.stepUs - chosen.prediction.stepUs,
    priceDeltaMinor: gang.pricePerHourMinor - chosen.pricePerHourMinor,
  };
};

/** Why a gang lost to the chosen one: its first worse position in the strategy's order. */
const lossOf = (
  placement: PlacementStrategy,
  rival: CandidateGang,
  chosen: CandidateGang,
): Exclude<LossReason, 'constraint'> => {
  if (compareKeys(rival.key, chosen.key) < 0) return 'ensemble';
  const at = rival.key.findIndex((v, i) => v !== chosen.key[i]);
  return at < 0 ? 'tie-break' : KEY_MEANING[placement][at]!;
};

/**
 * The explanation of one placed allocation: the chosen nodes and prediction, every figure the
 * objective used with its source, and the best gangs not chosen with the rule each lost on. Built
 * only when asked (`ScheduleOptions.explain`), from gangs the search evaluated anyway plus, for a
 * request with interconnect requirements, one search without them.
 */
export const explainAllocation = (input: ExplainInput): AllocationExplanation => {
  const { ctx, placement, chosen } = input;
  const inv = ctx.inventory;
  const gpus = gpuFigures(ctx, placement);
  const hosts = chosen.members.map((m) => m.hostIndex);
  const pairCount = (hosts.length * (hosts.length - 1)) / 2;
  const links = pairFigures(inv, hosts, MAX_LINK_FIGURES);
  const ic = ctx.request.interconnect;
  const ranked: { gang: CandidateGang; broken: string | null }[] = [];
  for (const gang of input.unconstrained) {
    const broken = violation(inv, ic, gang);
    if (broken !== null) ranked.push({ gang, broken });
  }
  for (const gang of input.rivals) ranked.push({ gang, broken: null });
  // Best first, then one per node set (the best of duplicates); the chosen nodes are no alternative.
  ranked.sort((x, y) => compareKeys(x.gang.key, y.gang.key));
  const seen = new Set([nodeSet(chosen)]);
  const candidates: { gang: CandidateGang; lostOn: LossReason; message: string }[] = [];
  for (const { gang, broken } of ranked) {
    if (candidates.length === MAX_ALTERNATIVES) break;
    const nodes = nodeSet(gang);
    if (seen.has(nodes)) continue;
    seen.add(nodes);
    if (broken !== null) {
      candidates.push({ gang, lostOn: 'constraint', message: broken });
      continue;
    }
    const lostOn = lossOf(ctx.request.placement, gang, chosen);
    candidates.push({ gang, lostOn, message: lossMessage(lostOn, gang, chosen, input.stepTimeTolerance) });
  }
  return {
    placement,
    strategy: ctx.request.placement,
    stepTimeTolerance: input.stepTimeTolerance,
    gpus: gpus.slice(0, MAX_GPU_FIGURES),
    gpusOmitted: Math.max(0, gpus.length - MAX_GPU_FIGURES),
    links,
    linksOmitted: pairCount - links.length,
    alternatives: candidates.map((c) => alternativeOf(inv, c.gang, chosen, c.lostOn, c.message)),
  };
};
