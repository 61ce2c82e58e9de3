import { validRange } from 'semver';
import type { PreFilterPlugin } from '../../framework/plugin';
import { MAX_GPUS_PER_HOST } from '../../model/request';
import { SUCCESS, unresolvable } from '../../model/status';

export const REQUEST_SHAPE = 'request-shape';
export const RequestShapeReason = { InvalidRequest: 'InvalidRequest' } as const;

const positiveInt = (n: number): boolean => Number.isSafeInteger(n) && n > 0;

/** Rejects requests that can never be placed because they contradict themselves. */
export const requestShapePreFilter: PreFilterPlugin = {
  name: REQUEST_SHAPE,
  preFilter: ({ request: r, workload: w }) => {
    const problems: string[] = [];
    if (!positiveInt(r.gpuCount)) problems.push(`gpu count must be a positive integer, got ${r.gpuCount}`);
    if (!positiveInt(r.gpusPerRank))
      problems.push(`gpus per rank must be a positive integer, got ${r.gpusPerRank}`);
    else if (r.gpuCount % r.gpusPerRank !== 0) {
      problems.push(`${r.gpuCount} GPUs is not a whole number of ranks of ${r.gpusPerRank}`);
    }
    if (!positiveInt(r.maxNodes)) problems.push(`max_nodes must be a positive integer, got ${r.maxNodes}`);
    if (r.gpusPerNode !== null) {
      const { min, max } = r.gpusPerNode;
      if (!positiveInt(min) || !positiveInt(max) || min > max) {
        problems.push(`gpus per node must be 1 ≤ min ≤ max, got ${min}–${max}`);
      } else if (min > MAX_GPUS_PER_HOST) {
        problems.push(`gpus per node min ${min} exceeds the ${MAX_GPUS_PER_HOST} GPUs a host can have`);
      }
    }
    if (r.cudaRange !== null && validRange(r.cudaRange) === null)
      problems.push(`invalid CUDA range '${r.cudaRange}'`);
    if (r.rocmRange !== null && validRange(r.rocmRange) === null)
      problems.push(`invalid ROCm range '${r.rocmRange}'`);
    if (!(w.flopPerStepPerGpu > 0) || !(w.allReduceBytes >= 0))
      problems.push('workload figures must be positive');
    return problems.length === 0
      ? SUCCESS
      : unresolvable(REQUEST_SHAPE, RequestShapeReason.InvalidRequest, problems.join('; '));
  },
};
