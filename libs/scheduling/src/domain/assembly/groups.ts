import type { PoolHost } from './gang';

export interface ModelGroup {
  /** null when models mix. */
  readonly model: string | null;
  readonly hosts: readonly PoolHost[];
  readonly usable: number;
}

/**
 * Without mixing, each GPU model is its own pool (sorted by model name); a host with two models
 * appears in both, with only that model's GPUs. With mixing, one pool.
 */
export const modelGroups = (hosts: readonly PoolHost[], mixed: boolean): ModelGroup[] => {
  if (mixed) return [{ model: null, hosts, usable: hosts.reduce((n, h) => n + h.gpus.length, 0) }];
  const byModel = new Map<string, { hosts: PoolHost[]; usable: number }>();
  const add = (model: string, h: PoolHost): void => {
    const g = byModel.get(model);
    if (g === undefined) byModel.set(model, { hosts: [h], usable: h.gpus.length });
    else {
      g.hosts.push(h);
      g.usable += h.gpus.length;
    }
  };
  for (const h of hosts) {
    const first = h.gpus[0]!.model;
    let uniform = true;
    for (let i = 1; i < h.gpus.length; i++) {
      if (h.gpus[i]!.model !== first) {
        uniform = false;
        break;
      }
    }
    if (uniform) {
      add(first, h);
      continue;
    }
    for (const model of new Set(h.gpus.map((g) => g.model))) {
      const keep = h.gpus.flatMap((g, i) => (g.model === model ? [i] : []));
      add(model, {
        ...h,
        gpus: keep.map((i) => h.gpus[i]!),
        speeds: keep.map((i) => h.speeds[i]!),
        prices: keep.map((i) => h.prices[i]!),
      });
    }
  }
  return [...byModel.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([model, g]) => ({ model, hosts: g.hosts, usable: g.usable }));
};
