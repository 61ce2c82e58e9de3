import type { BenchmarkProfile, ChallengeDtype } from '@gpunet/contracts';
import { findReference, TYPICAL_EFFICIENCY } from '@gpunet/edge-bench';

/** Where a challenge's claimed throughput came from. */
export interface ClaimedFigure {
  readonly dtype: ChallengeDtype;
  /** TFLOPS at `dtype`: what placement uses for the GPU. */
  readonly tflops: number;
  readonly source: 'measured' | 'reference';
}

/**
 * The throughput a challenge's deadline is derived from: the figure placement uses for the GPU
 * (the scheduler's `gpuFigures`) — its live profile's matmul TFLOPS, the device matched by uuid
 * (else by index when the runtime hid the uuid), when that profile measured any; else the reference
 * table's data-sheet peak for the claimed model × the efficiency a healthy device typically
 * measures, rounded to 0.1 as placement rounds it. The precision is fp16 for a GPU (CUDA, ROCm),
 * fp32 for a CPU; fp32 when the GPU's figures have no fp16. Null: nothing to size a challenge by
 * (an unknown model never measured).
 */
export const claimedFigure = (
  gpu: { readonly index: number; readonly uuid: string; readonly model: string },
  profile: BenchmarkProfile | null,
): ClaimedFigure | null => {
  const device =
    profile?.devices.find((d) => d.uuid !== null && d.uuid === gpu.uuid) ??
    profile?.devices.find((d) => d.uuid === null && d.index === gpu.index);
  if (device !== undefined && Object.values(device.matmulTflops).some((v) => v !== null)) {
    const preferred: ChallengeDtype = device.kind === 'cpu' ? 'fp32' : 'fp16';
    const v = device.matmulTflops[preferred];
    if (v !== null && v > 0) return { dtype: preferred, tflops: v, source: 'measured' };
    const fp32 = device.matmulTflops.fp32;
    return fp32 !== null && fp32 > 0 ? { dtype: 'fp32', tflops: fp32, source: 'measured' } : null;
  }
  const ref = findReference(gpu.model);
  if (ref === null) return null;
  for (const dtype of ['fp16', 'fp32'] as const) {
    const peak = ref.tflops[dtype];
    if (peak !== null && peak > 0)
      return { dtype, tflops: Math.round(peak * TYPICAL_EFFICIENCY.matmul * 10) / 10, source: 'reference' };
  }
  return null;
};
