/**
 * Environment variables gpunet sets for every rank (DESIGN §4.7: the rendezvous environment, device
 * visibility, the job network interface). A spec may not set them, or a rank would meet the wrong
 * peers or see the wrong devices.
 */
export const RESERVED_ENV: ReadonlySet<string> = new Set([
  'RANK',
  'WORLD_SIZE',
  'LOCAL_RANK',
  'LOCAL_WORLD_SIZE',
  'NODE_RANK',
  'GROUP_RANK',
  'MASTER_ADDR',
  'MASTER_PORT',
  'CUDA_VISIBLE_DEVICES',
  'HIP_VISIBLE_DEVICES',
  'ROCR_VISIBLE_DEVICES',
  'NVIDIA_VISIBLE_DEVICES',
  'NCCL_SOCKET_IFNAME',
  'GLOO_SOCKET_IFNAME',
  'HOROVOD_HOSTNAMES',
]);

/** Prefixes gpunet and the launchers it drives own. */
export const RESERVED_ENV_PREFIXES = ['GPUNET_', 'OMPI_', 'PMIX_', 'TORCHELASTIC_'] as const;

export const isReservedEnv = (name: string): boolean =>
  RESERVED_ENV.has(name) || RESERVED_ENV_PREFIXES.some((p) => name.startsWith(p));
