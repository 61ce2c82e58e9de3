/** A valid spec: 4 H100 GPUs on one node, with a budget, in subnet `ai`. */
export const VALID_SPEC_YAML = `apiVersion: gpunet.io/v1
kind: Ensemble
metadata:
  name: finetune-h100x4
max_duration: 2h
subnet: ai
budget:
  asset: NTX
  decimals: 6
  max_price_per_gpu_hour: '2.50'
allocations:
  trainer:
    execution:
      image: nvcr.io/nvidia/pytorch:24.05-py3
      cmd: [python, -m, train]
    resources:
      cpu: { cores: 8 }
      ram: { size: 64GiB }
      gpus:
        count: 4
        vendor: nvidia
        models: [H100]
        min_vram: 40GB
    distributed:
      framework: torchrun
      gpus_per_rank: 1
      max_nodes: 1
`;

/** The same spec as JSON. */
export const VALID_SPEC_JSON = JSON.stringify({
  apiVersion: 'gpunet.io/v1',
  kind: 'Ensemble',
  metadata: { name: 'json-job' },
  max_duration: '1h',
  budget: { asset: 'NTX', decimals: 6, max_price_per_gpu_hour: '1' },
  allocations: {
    main: {
      execution: { image: 'ghcr.io/example/train:1', cmd: ['python', 'train.py'] },
      resources: { cpu: { cores: 2 }, ram: { size: '8GiB' }, gpus: { count: 2, vendor: 'nvidia' } },
      distributed: { framework: 'torchrun', gpus_per_rank: 1, max_nodes: 1 },
    },
  },
});

/** Two errors: a wrong type on line 9 and an unknown field on line 16. */
export const INVALID_SPEC_YAML = `apiVersion: gpunet.io/v1
kind: Ensemble
metadata:
  name: broken
max_duration: 2h
budget:
  asset: NTX
  decimals: 6
  max_price_per_gpu_hour: [1]
allocations:
  trainer:
    execution:
      image: x/y:1
      cmd: [python]
    resources:
      gpuz: { count: 2 }
`;

/** Valid, but without a budget. */
export const NO_BUDGET_SPEC_YAML = VALID_SPEC_YAML.replace(/budget:\n( {2}.*\n)+/, '');
