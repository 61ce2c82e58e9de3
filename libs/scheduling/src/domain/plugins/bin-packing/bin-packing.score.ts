import type { ScorePlugin } from '../../framework/plugin';

export const BIN_PACKING = 'bin-packing';

/**
 * Best fit (Kubernetes' MostAllocated): hosts left with the fewest free GPUs after this job come
 * first, so whole hosts stay whole for the large gangs that need them.
 */
export const binPackingScore: ScorePlugin = {
  name: BIN_PACKING,
  better: 'lower',
  score: ({ request }, h) => {
    const perNode = Math.min(request.gpuCount, request.gpusPerNode?.max ?? request.gpuCount);
    return h.freeGpus - Math.min(h.gpus.length, perNode);
  },
};
