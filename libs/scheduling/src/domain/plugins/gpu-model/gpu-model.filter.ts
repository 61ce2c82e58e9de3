import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const GPU_MODEL = 'gpu-model';
export const GpuModelReason = { ModelNotAccepted: 'ModelNotAccepted' } as const;

export const gpuModelFilter: FilterPlugin = {
  name: GPU_MODEL,
  gpuFilter: ({ request }) => {
    if (request.models.length === 0) return null;
    const accepted = new Set(request.models.map((m) => m.toUpperCase()));
    const other = unresolvable(
      GPU_MODEL,
      GpuModelReason.ModelNotAccepted,
      `model is not ${[...accepted].join('|')}`,
    );
    return (gpu) => (accepted.has(gpu.model) ? SUCCESS : other);
  },
  describe: ({ request }) =>
    request.models.length === 0 ? null : `model ${request.models.map((m) => m.toUpperCase()).join('|')}`,
};
