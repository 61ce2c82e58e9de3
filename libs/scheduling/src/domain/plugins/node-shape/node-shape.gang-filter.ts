import { shapeLimits } from '../../assembly/shape';
import type { GangFilterPlugin } from '../../framework/plugin';
import { pluginError, SUCCESS } from '../../model/status';

export const NODE_SHAPE = 'node-shape';
export const NodeShapeReason = { ShapeViolated: 'ShapeViolated' } as const;

/** GPU count, per-node min/max in whole ranks, max nodes, distinct hosts, provider per-job caps. */
export const nodeShapeGangFilter: GangFilterPlugin = {
  name: NODE_SHAPE,
  filterGang: ({ request }, gang) => {
    const l = shapeLimits(request);
    const fail = (why: string) => pluginError(NODE_SHAPE, NodeShapeReason.ShapeViolated, why);
    if (gang.gpuCount !== l.total) return fail(`gang has ${gang.gpuCount} GPUs, ${l.total} asked`);
    if (gang.nodes.length > l.maxNodes) return fail(`gang has ${gang.nodes.length} nodes, max ${l.maxNodes}`);
    const hosts = new Set<number>();
    const perProvider = new Map<number, number>();
    for (const n of gang.nodes) {
      const g = n.gpus.length;
      if (g < l.perNodeMin || g > l.perNodeMax || g % l.step !== 0) {
        return fail(
          `node ${n.host.id} has ${g} GPUs, allowed ${l.perNodeMin}–${l.perNodeMax} in steps of ${l.step}`,
        );
      }
      if (hosts.has(n.host.index)) return fail(`host ${n.host.id} appears twice`);
      hosts.add(n.host.index);
      perProvider.set(n.provider.index, (perProvider.get(n.provider.index) ?? 0) + g);
      const cap = n.provider.policy.maxGpusPerJob;
      if (cap !== null && perProvider.get(n.provider.index)! > cap) {
        return fail(`provider ${n.provider.id} gives a job at most ${cap} GPUs`);
      }
    }
    return SUCCESS;
  },
};
