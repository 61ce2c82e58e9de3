import type { Gpu, Inventory } from '@gpunet/contracts';
import type { BackendResult, DetectedGpu } from './detection.types';

/**
 * One inventory from every backend's result. Backends are independent: one that fails or is absent
 * never hides another's GPUs (NuNet DMS missed AMD cards when NVIDIA was present), and a host with
 * both reports both. Only the simulated backend's GPUs make an inventory `simulated`; it is never
 * mixed with real detection. Volatile readings (utilization) are dropped: an inventory changes only
 * when the hardware does.
 */
export const mergeInventory = (results: readonly BackendResult[]): Inventory => {
  const simulated = results.some((r) => r.name === 'simulated');
  const used = simulated ? results.filter((r) => r.name === 'simulated') : results;
  const gpus: Gpu[] = [];
  const uuids = new Set<string>();
  for (const result of used) {
    for (const gpu of result.gpus) {
      if (uuids.has(gpu.uuid)) continue;
      uuids.add(gpu.uuid);
      gpus.push(stableGpu(gpu));
    }
  }
  gpus.sort((a, b) => (a.vendor === b.vendor ? a.index - b.index : a.vendor < b.vendor ? -1 : 1));
  return {
    simulated,
    backends: results.map((r) => ({
      name: r.name,
      status: r.status,
      detail: r.detail === null ? null : r.detail.slice(0, 1024),
    })),
    gpus,
    links: used
      .flatMap((r) => r.links)
      .slice(0, 2016)
      .sort((x, y) => (x.vendor === y.vendor ? x.a - y.a || x.b - y.b : x.vendor < y.vendor ? -1 : 1)),
  };
};

const stableGpu = ({ utilizationPercent: _u, ...gpu }: DetectedGpu): Gpu => gpu;

/** Indices of the GPUs joined to `gpu` by NVLink or xGMI. */
export const directPeers = (inventory: Inventory, gpu: Pick<Gpu, 'vendor' | 'index'>): number[] =>
  inventory.links
    .filter(
      (l) =>
        l.vendor === gpu.vendor &&
        (l.kind === 'nvlink' || l.kind === 'xgmi') &&
        (l.a === gpu.index || l.b === gpu.index),
    )
    .map((l) => (l.a === gpu.index ? l.b : l.a))
    .sort((a, b) => a - b);
