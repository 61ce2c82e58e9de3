import { createPrng, type GangRequest, gangRequest } from '@gpunet/scheduling';
import type { SimTask } from './sim';

/** Job sizes (GPUs) and their weights. */
export type SizeMix = readonly (readonly [number, number])[];

/** Mostly single-node jobs with a tail of gangs (a decentralized network's day). */
export const MIXED: SizeMix = [
  [1, 40],
  [2, 15],
  [4, 15],
  [8, 18],
  [16, 7],
  [32, 3],
  [64, 2],
];

/** Training gangs only (for the large cluster: fewer, bigger jobs fill it). */
export const GANGS: SizeMix = [
  [8, 30],
  [16, 30],
  [32, 20],
  [64, 15],
  [128, 5],
];
const CLASSES: readonly (readonly string[])[] = [
  ['H100-SXM', 'A100-80G'],
  ['RTX-4090', 'RTX-3090'],
  ['L40S', 'RTX-A6000'],
  ['A100-40G', 'A100-80G'],
];

/**
 * A synthetic job stream for the generated clusters: sizes from a mix; 30% name GPU classes, 20% need ≥ 40 GB; gangs over 8 GPUs allow 2 nodes per 8 GPUs
 * and a third of them need ≤ 5 ms RTT; durations log-normal (median 30 min, capped at a day);
 * Poisson arrivals at `load` × the cluster's GPUs on average.
 */
export const syntheticJobs = (
  count: number,
  capacityGpus: number,
  load: number,
  seed: number,
  sizes: SizeMix = MIXED,
): SimTask[] => {
  const rnd = createPrng(seed);
  const total = sizes.reduce((s, [, w]) => s + w, 0);
  const size = (): number => {
    let r = rnd() * total;
    for (const [n, w] of sizes) {
      r -= w;
      if (r < 0) return n;
    }
    return 1;
  };
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const gangs: { gang: GangRequest; duration: number }[] = Array.from({ length: count }, (_, i) => {
    const n = size();
    const duration = Math.min(86_400, 1800 * Math.exp(1.2 * normal()));
    const big = n > 8;
    return {
      duration,
      gang: gangRequest({
        name: `j${i}`,
        gpuCount: n,
        models: rnd() < 0.3 ? [...CLASSES[Math.floor(rnd() * CLASSES.length)]!] : [],
        minVramBytes: rnd() < 0.2 ? 40e9 : 0,
        maxNodes: big ? Math.ceil(n / 8) * 2 : n,
        interconnect: {
          minBandwidthBps: null,
          maxRttUs: big && rnd() < 0.33 ? 5_000 : null,
          sameSite: false,
        },
      }),
    };
  });
  const meanWork = gangs.reduce((s, g) => s + g.gang.gpuCount * g.duration, 0) / count;
  const rate = (load * capacityGpus) / meanWork;
  let t = 0;
  return gangs.map((g, i) => {
    t += -Math.log(1 - rnd()) / rate;
    return { id: `job-${i}`, arrival: t, duration: g.duration, gang: g.gang };
  });
};
