import { type FilterPlugin, PRECISIONS, type Status, SUCCESS, unschedulable } from '@gpunet/scheduling';

export const MEASURED_TFLOPS = 'measured-tflops';
export const MeasuredTflopsReason = { NotBenchmarked: 'NotBenchmarked' } as const;

/**
 * A job that asks `min_tflops` is placed only on GPUs benchmarking has measured: an unmeasured
 * GPU's figures are its model's reference ones (`placement-input.ts`), and the control plane never
 * believes a GPU's name — a provider claiming an H100 may run anything. Benchmarking measures a new
 * provider at its next sweep, and the measurement's arrival wakes parked jobs, so the job waits
 * (`Unschedulable`, not now) rather than fails. Runs before the core's `tflops` filter, which then
 * compares the measured figures.
 */
export const measuredTflopsFilter: FilterPlugin = {
  name: MEASURED_TFLOPS,
  namesFigures: true,
  gpuFilter: ({ request }) => {
    const named = PRECISIONS.filter((p) => (request.minTflops[p] ?? 0) > 0);
    if (named.length === 0) return null;
    const statuses = new Map<string, Status>();
    return (gpu) => {
      if (gpu.tflopsMeasured) return SUCCESS;
      const figures = named
        .map((p) => (gpu.tflops[p] === undefined ? null : `${gpu.tflops[p]} TFLOPS ${p}`))
        .filter((f) => f !== null)
        .join(', ');
      let st = statuses.get(figures);
      if (st === undefined) {
        st = unschedulable(
          MEASURED_TFLOPS,
          MeasuredTflopsReason.NotBenchmarked,
          `GPU is not benchmarked yet (reference ${figures === '' ? 'unknown' : figures}): a job with min_tflops waits for measured figures`,
        );
        statuses.set(figures, st);
      }
      return st;
    };
  },
  describe: ({ request }) =>
    PRECISIONS.some((p) => (request.minTflops[p] ?? 0) > 0) ? 'TFLOPS measured by benchmarking' : null,
};
