import { type GpuRequirement, parseEnsembleSpec } from '@gpunet/ensemble-spec';

/** The normalized GPU requirement of a one-allocation spec: what the scheduler will ask discovery. */
export const gpuRequirement = (gpus: string): GpuRequirement => {
  const spec = `apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: probe }
max_duration: 1h
allocations:
  main:
    execution: { image: nvcr.io/nvidia/pytorch:24.05-py3, cmd: [python] }
    resources:
      cpu: { cores: 1 }
      ram: { size: 1GiB }
      gpus: ${gpus}
`;
  const parsed = parseEnsembleSpec(spec);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.spec.allocations[0]!.resources.gpus!;
};
