import type { FilterPlugin } from '../../framework/plugin';
import { PRECISIONS } from '../../model/precision';
import { SUCCESS, unresolvable } from '../../model/status';

export const TFLOPS = 'tflops';
export const TflopsReason = { InsufficientTflops: 'InsufficientTflops' } as const;

/**
 * Measured (or, when not yet benchmarked, declared) TFLOPS at every precision the job names must
 * reach its minimum. A GPU with no figure for a named precision does not qualify.
 */
export const tflopsFilter: FilterPlugin = {
  name: TFLOPS,
  gpuFilter: ({ request }) => {
    const mins = PRECISIONS.flatMap((p) => {
      const v = request.minTflops[p];
      return v === undefined || v <= 0 ? [] : [[p, v] as const];
    });
    if (mins.length === 0) return null;
    const slow = unresolvable(
      TFLOPS,
      TflopsReason.InsufficientTflops,
      `GPU is slower than ${mins.map(([p, v]) => `${v} TFLOPS ${p}`).join(', ')}`,
    );
    return (gpu) => {
      for (const [p, v] of mins) {
        if ((gpu.tflops[p] ?? 0) < v) return slow;
      }
      return SUCCESS;
    };
  },
  describe: ({ request }) => {
    const parts = PRECISIONS.filter((p) => (request.minTflops[p] ?? 0) > 0).map(
      (p) => `≥ ${request.minTflops[p]} TFLOPS ${p}`,
    );
    return parts.length === 0 ? null : parts.join(', ');
  },
};
