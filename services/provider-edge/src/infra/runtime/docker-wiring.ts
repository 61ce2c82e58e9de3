/*
 * How an edge makes its docker runtime from what it knows once the policy and the hardware are
 * read: the provider's image allow-list, the limits it shares (the host less what it keeps), and the
 * AMD device files of the inventory's GPUs. `EdgeAgent`'s `ranks.runtimes` takes it as is:
 *
 *   runtimes: async (context) => [await createDockerRuntime(context)]
 */
import type { Host } from '@gpunet/contracts';
import type { Policy } from '../../domain/policy/policy';
import { type InventoryGpu, readAmdDevices } from './docker-host';
import { NO_AMD_DEVICES, type SandboxLimits } from './docker-sandbox';
import { DockerRuntime, type DockerRuntimeLog, type DockerRuntimeOptions } from './docker.runtime';

/** The part of the edge's `RankRuntimeContext` the docker runtime needs. */
export interface DockerRuntimeContext {
  readonly edgeId: string;
  readonly policy: Pick<Policy, 'images' | 'reserveCpuMillicores' | 'reserveMemoryBytes'>;
  readonly host: Pick<Host, 'cpu' | 'memoryBytes'>;
  readonly inventory: { readonly gpus: readonly InventoryGpu[]; readonly simulated: boolean };
  readonly log: DockerRuntimeLog;
}

/** What one rank may have at most: the host less what the provider keeps for itself. */
export const sandboxLimitsFor = (
  policy: DockerRuntimeContext['policy'],
  host: DockerRuntimeContext['host'],
): SandboxLimits => ({
  maxMemoryBytes: Math.max(0, host.memoryBytes - policy.reserveMemoryBytes),
  maxCpuMillicores: Math.max(0, host.cpu.logicalCores * 1000 - policy.reserveCpuMillicores),
});

/**
 * The docker runtime of an edge. AMD GPUs whose render node cannot be found are logged (ranks that
 * reserve them are refused at start); `overrides` replace any option (tests: `pull: false`).
 */
export const createDockerRuntime = async (
  context: DockerRuntimeContext,
  overrides: Partial<DockerRuntimeOptions> = {},
): Promise<DockerRuntime> => {
  const simulated = context.inventory.simulated;
  const amd = simulated
    ? { devices: NO_AMD_DEVICES, problems: [] }
    : await readAmdDevices(context.inventory.gpus);
  for (const problem of amd.problems)
    context.log('warn', 'an AMD GPU cannot be given to containers', { problem });
  if (simulated)
    context.log(
      'warn',
      'simulated GPUs: rank containers get no GPU device (GPUNET_SIMULATED_GPUS names the reserved ones)',
    );
  return new DockerRuntime({
    edgeId: context.edgeId,
    allowedImages: context.policy.images,
    limits: sandboxLimitsFor(context.policy, context.host),
    amd: amd.devices,
    simulatedGpus: simulated,
    log: context.log,
    ...overrides,
  });
};
