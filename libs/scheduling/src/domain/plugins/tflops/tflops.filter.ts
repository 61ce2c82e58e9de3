import type { FilterPlugin } from '../../framework/plugin';
import { type Precision, PRECISIONS } from '../../model/precision';
import { type Status, SUCCESS, unresolvable } from '../../model/status';

export const TFLOPS = 'tflops';
export const TflopsReason = { InsufficientTflops: 'InsufficientTflops' } as const;

/**
 * Measured (or, when not yet benchmarked, declared) TFLOPS at every precision the job names must
 * reach its minimum. A GPU with no figure for a named precision does not qualify. The reason names
 * the GPU's own figure and whether it was measured (`has 50 TFLOPS fp16 (measured), below 100`);
 * statuses are shared per figure, so a large inventory allocates one per distinct figure.
 */
export const tflopsFilter: FilterPlugin = {
  name: TFLOPS,
  namesFigures: true,
  gpuFilter: ({ request }) => {
    const mins = PRECISIONS.flatMap((p) => {
      const v = request.minTflops[p];
      return v === undefined || v <= 0 ? [] : [[p, v] as const];
    });
    if (mins.length === 0) return null;
    const statuses = new Map<string, Status>();
    const slow = (p: Precision, min: number, has: number | undefined, measured: boolean): Status => {
      const key = `${p}:${has}:${measured}`;
      let st = statuses.get(key);
      if (st === undefined) {
        const figure =
          has === undefined
            ? `no ${p} figure`
            : `${+has.toFixed(1)} TFLOPS ${p} (${measured ? 'measured' : 'declared'})`;
        st = unresolvable(TFLOPS, TflopsReason.InsufficientTflops, `GPU has ${figure}, below ${min}`);
        statuses.set(key, st);
      }
      return st;
    };
    return (gpu) => {
      for (const [p, v] of mins) {
        const has = gpu.tflops[p];
        if ((has ?? 0) < v) return slow(p, v, has, gpu.tflopsMeasured);
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
