import type { ScorePlugin } from '../../framework/plugin';

export const GPU_THROUGHPUT = 'gpu-throughput';

/** Faster hosts first: the slowest GPU the host would give if it gave as many as the gang needs. */
export const gpuThroughputScore: ScorePlugin = {
  name: GPU_THROUGHPUT,
  better: 'higher',
  score: ({ request }, h) => h.speeds[Math.min(h.speeds.length, request.gpuCount) - 1] ?? 0,
};
