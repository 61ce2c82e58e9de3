import type { ScorePlugin } from '../../src';

export const MEASURED_TFLOPS = 'measured-tflops';

/** Hosts whose GPUs benchmarking has measured come before hosts that only declared their speed. */
export const measuredTflopsScore: ScorePlugin = {
  name: MEASURED_TFLOPS,
  better: 'higher',
  score: (_ctx, host) => host.gpus.filter((g) => g.tflopsMeasured).length / host.gpus.length,
};
