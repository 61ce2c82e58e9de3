import { shapeLimits } from '../../assembly/shape';
import type { PreFilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const NODE_LIMITS = 'node-limits';
export const NodeLimitsReason = {
  /** max_nodes × the most GPUs per node is below the GPU count. */
  MaxNodesTooSmall: 'MaxNodesTooSmall',
  /** The whole gang is smaller than one node's minimum. */
  BelowPerNodeMinimum: 'BelowPerNodeMinimum',
  /** No rank fits a node: gpus per node max is below gpus per rank. */
  RankDoesNotFitNode: 'RankDoesNotFitNode',
  /** The snapshot has fewer GPUs than asked, free or not. */
  ClusterTooSmall: 'ClusterTooSmall',
} as const;

/** Shapes no cluster state can satisfy: decided before looking at any host. */
export const nodeLimitsPreFilter: PreFilterPlugin = {
  name: NODE_LIMITS,
  preFilter: ({ request, inventory }) => {
    const l = shapeLimits(request);
    if (l.perNodeMax < l.step) {
      return unresolvable(
        NODE_LIMITS,
        NodeLimitsReason.RankDoesNotFitNode,
        `a rank needs ${l.step} GPUs but a node may hold at most ${request.gpusPerNode?.max}`,
      );
    }
    if (l.total < l.perNodeMin) {
      return unresolvable(
        NODE_LIMITS,
        NodeLimitsReason.BelowPerNodeMinimum,
        `${l.total} GPUs asked but every node needs at least ${l.perNodeMin}`,
      );
    }
    if (l.maxNodes * l.perNodeMax < l.total) {
      return unresolvable(
        NODE_LIMITS,
        NodeLimitsReason.MaxNodesTooSmall,
        `${l.total} GPUs asked but max_nodes ${l.maxNodes} × at most ${l.perNodeMax} per node holds ${l.maxNodes * l.perNodeMax}`,
      );
    }
    if (inventory.gpus.length < l.total) {
      return unresolvable(
        NODE_LIMITS,
        NodeLimitsReason.ClusterTooSmall,
        `${l.total} GPUs asked but the cluster has ${inventory.gpus.length}`,
      );
    }
    return SUCCESS;
  },
};
