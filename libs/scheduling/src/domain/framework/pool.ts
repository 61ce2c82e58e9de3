import type { Pool, PoolHost } from '../assembly/gang';
import { gpuPrices } from '../objective/price';
import { gpuSpeeds } from '../objective/step-time';
import { tieKey } from '../random/prng';
import type { Precision } from '../model/precision';
import { DEFAULT_RELIABILITY } from '../model/snapshot-input';
import {
  type ClusterSnapshot,
  type CompiledGpu,
  type Inventory,
  memoized,
  popcount,
} from '../snapshot/cluster-snapshot';
import type { RequestContext } from './context';
import type { Eligibility } from './eligibility';
import type { WeightedScore } from './plugin';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A provider's reliability as the tie-break uses it: the default when unscored, clamped to 0 … 1. */
const reliabilityOf = (r: number | undefined): number =>
  r === undefined || !Number.isFinite(r) ? DEFAULT_RELIABILITY : Math.min(1, Math.max(0, r));

/** Each host's GPUs, fastest first at a precision: global GPU indices laid out like `inventory.gpus` (memoized). */
const speedOrder = (inv: Inventory, precision: Precision): Int32Array =>
  memoized(inv, `order:${precision}`, () => {
    const speeds = gpuSpeeds(inv, precision);
    const order = new Int32Array(inv.gpus.length);
    for (const host of inv.hosts) {
      const ids = Array.from({ length: host.gpuCount }, (_, i) => host.gpuStart + i);
      ids.sort((a, b) => speeds[b]! - speeds[a]! || a - b);
      order.set(ids, host.gpuStart);
    }
    return order;
  });

/**
 * Score only part of a large pool (the Kubernetes scheduler's percentageOfNodesToScore): whole
 * sites in rotation from `offset`, until at least `minHosts` hosts and `minGpus` usable GPUs.
 */
export interface PoolSample {
  readonly offset: number;
  readonly minHosts: number;
  readonly minGpus: number;
}

/**
 * The hosts that can serve the request now (eligible, free, at least `minUsable` of them, and
 * allowed by `allowHost` — the ensemble's edge constraints), each with its usable GPUs fastest
 * first and its weighted score; grouped by site. With a sample, only part of them (`complete`
 * false when some were left out).
 */
export const buildPool = (
  ctx: RequestContext,
  snapshot: ClusterSnapshot,
  elig: Eligibility,
  scores: readonly WeightedScore[],
  seed: number,
  allowHost: ((host: number) => boolean) | null,
  sample: PoolSample | null = null,
  minUsable = 1,
): Pool => {
  const inv = ctx.inventory;
  const speeds = gpuSpeeds(inv, ctx.workload.precision);
  const order = speedOrder(inv, ctx.workload.precision);
  const prices = gpuPrices(inv);
  const hosts: Mutable<PoolHost>[] = [];
  let usable = 0;
  let tooSmall = 0;
  let complete = true;
  const siteCount = elig.sites.length;
  const start = sample === null || siteCount === 0 ? 0 : sample.offset % siteCount;
  for (let k = 0; k < siteCount; k++) {
    if (sample !== null && hosts.length >= sample.minHosts && usable >= sample.minGpus) {
      complete = false;
      break;
    }
    for (const h of elig.sites[(start + k) % siteCount]!.hosts) {
      const free = snapshot.freeMask[h]!;
      const bits = elig.mask[h]! & free;
      if (bits === 0 || (allowHost !== null && !allowHost(h))) continue;
      const n = popcount(bits);
      if (n < minUsable) {
        tooSmall += n;
        continue;
      }
      const host = inv.hosts[h]!;
      const gpus: CompiledGpu[] = [];
      const gpuSpeed: number[] = [];
      const gpuPrice: number[] = [];
      for (let j = host.gpuStart; j < host.gpuStart + host.gpuCount; j++) {
        const g = order[j]!;
        const gpu = inv.gpus[g]!;
        if (((bits >>> gpu.local) & 1) === 0) continue;
        gpus.push(gpu);
        gpuSpeed.push(speeds[g]!);
        gpuPrice.push(prices[g]!);
      }
      usable += gpus.length;
      hosts.push({
        host,
        provider: inv.providers[host.providerIndex]!,
        gpus,
        speeds: gpuSpeed,
        prices: gpuPrice,
        freeGpus: popcount(free),
        hostIndex: h,
        providerIndex: host.providerIndex,
        siteIndex: host.siteIndex,
        nicBandwidthBps: host.nicBandwidthBps,
        reliability: reliabilityOf(inv.providers[host.providerIndex]!.policy.reliability),
        tie: tieKey(seed, h),
        score: 0,
      });
    }
  }
  scoreHosts(ctx, hosts, scores);
  return { hosts, usableGpus: usable, gpusOnSmallHosts: tooSmall, minUsable, complete };
};

/** Runs the score plugins, normalizes each to 0–100 over the pool (best = 100) and combines them by weight. */
const scoreHosts = (
  ctx: RequestContext,
  hosts: Mutable<PoolHost>[],
  scores: readonly WeightedScore[],
): void => {
  const totalWeight = scores.reduce((s, w) => s + Math.max(0, w.weight), 0);
  if (hosts.length === 0 || totalWeight === 0) return;
  const raw = new Float64Array(hosts.length);
  for (const { plugin, weight } of scores) {
    if (weight <= 0) continue;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < hosts.length; i++) {
      const v = plugin.score(ctx, hosts[i]!);
      raw[i] = v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const span = max - min;
    for (let i = 0; i < hosts.length; i++) {
      const v = raw[i]!;
      const normalized =
        span === 0 || !Number.isFinite(span)
          ? 100
          : ((plugin.better === 'higher' ? v - min : max - v) / span) * 100;
      hosts[i]!.score += (normalized * weight) / totalWeight;
    }
  }
};
