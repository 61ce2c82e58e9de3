import { satisfies } from 'semver';
import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const RUNTIME_VERSION = 'runtime-version';
export const RuntimeVersionReason = {
  CudaVersionMismatch: 'CudaVersionMismatch',
  RocmVersionMismatch: 'RocmVersionMismatch',
} as const;

/** The host's CUDA (NVIDIA) or ROCm (AMD) version must satisfy the job's semver range. */
export const runtimeVersionFilter: FilterPlugin = {
  name: RUNTIME_VERSION,
  gpuFilter: ({ request }) => {
    const { cudaRange, rocmRange } = request;
    if (cudaRange === null && rocmRange === null) return null;
    const cuda = unresolvable(
      RUNTIME_VERSION,
      RuntimeVersionReason.CudaVersionMismatch,
      `CUDA is not ${cudaRange}`,
    );
    const rocm = unresolvable(
      RUNTIME_VERSION,
      RuntimeVersionReason.RocmVersionMismatch,
      `ROCm is not ${rocmRange}`,
    );
    // Versions repeat across thousands of GPUs: decide each distinct one once.
    const seen = new Map<string, boolean>();
    const ok = (version: string | null, range: string): boolean => {
      if (version === null) return false;
      const key = `${range}@${version}`;
      let v = seen.get(key);
      if (v === undefined) {
        v = satisfies(version, range);
        seen.set(key, v);
      }
      return v;
    };
    return (gpu) => {
      if (gpu.vendor === 'nvidia')
        return cudaRange === null || ok(gpu.cudaVersion, cudaRange) ? SUCCESS : cuda;
      return rocmRange === null || ok(gpu.rocmVersion, rocmRange) ? SUCCESS : rocm;
    };
  },
  describe: ({ request }) => {
    const parts = [
      request.cudaRange === null ? null : `CUDA ${request.cudaRange}`,
      request.rocmRange === null ? null : `ROCm ${request.rocmRange}`,
    ].filter((p) => p !== null);
    return parts.length === 0 ? null : parts.join(', ');
  },
};
