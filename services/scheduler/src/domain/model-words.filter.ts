import { modelMatches } from '@gpunet/contracts';
import { type FilterPlugin, GPU_MODEL, GpuModelReason, SUCCESS, unresolvable } from '@gpunet/scheduling';

/**
 * Replaces the core's exact model filter: a spec's model names a GPU when its words appear as a
 * sequence in the GPU's reported name (`A100` and `A100 80GB` name `NVIDIA A100 80GB PCIe`), the
 * rule discovery and the ensemble spec use. Same plugin name and reason, so explanations read alike.
 */
export const modelWordsFilter: FilterPlugin = {
  name: GPU_MODEL,
  gpuFilter: ({ request }) => {
    if (request.models.length === 0) return null;
    const other = unresolvable(
      GPU_MODEL,
      GpuModelReason.ModelNotAccepted,
      `model is not ${request.models.join('|')}`,
    );
    return (gpu) => (request.models.some((m) => modelMatches(gpu.model, m)) ? SUCCESS : other);
  },
  describe: ({ request }) => (request.models.length === 0 ? null : `model ${request.models.join('|')}`),
};
