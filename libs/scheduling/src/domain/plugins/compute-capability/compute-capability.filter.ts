import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const COMPUTE_CAPABILITY = 'compute-capability';
export const ComputeCapabilityReason = {
  ComputeCapabilityTooLow: 'ComputeCapabilityTooLow',
  AmdArchitectureNotAccepted: 'AmdArchitectureNotAccepted',
} as const;

/** NVIDIA: compute capability at least the minimum. AMD: architecture among the accepted ones. */
export const computeCapabilityFilter: FilterPlugin = {
  name: COMPUTE_CAPABILITY,
  gpuFilter: ({ request }) => {
    const min = request.minComputeCapability;
    const archs = request.amdArchitectures;
    if (min === null && archs.length === 0) return null;
    const low = unresolvable(
      COMPUTE_CAPABILITY,
      ComputeCapabilityReason.ComputeCapabilityTooLow,
      `compute capability below ${min?.major}.${min?.minor}`,
    );
    const arch = unresolvable(
      COMPUTE_CAPABILITY,
      ComputeCapabilityReason.AmdArchitectureNotAccepted,
      `AMD architecture is not ${archs.join('|')}`,
    );
    return (gpu) => {
      if (gpu.vendor === 'nvidia') {
        if (min === null) return SUCCESS;
        const cc = gpu.computeCapability;
        if (cc === null) return low;
        return cc.major > min.major || (cc.major === min.major && cc.minor >= min.minor) ? SUCCESS : low;
      }
      return archs.length === 0 || (gpu.amdArch !== null && archs.includes(gpu.amdArch)) ? SUCCESS : arch;
    };
  },
  describe: ({ request }) => {
    const min = request.minComputeCapability;
    const parts = [
      min === null ? null : `compute capability ≥ ${min.major}.${min.minor}`,
      request.amdArchitectures.length === 0 ? null : `AMD arch ${request.amdArchitectures.join('|')}`,
    ].filter((p) => p !== null);
    return parts.length === 0 ? null : parts.join(', ');
  },
};
