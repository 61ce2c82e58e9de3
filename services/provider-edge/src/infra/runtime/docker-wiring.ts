/*
 * How an edge makes its docker runtime from what it knows once the policy and the hardware are
 * read: the provider's image allow-list, the limits it shares (the host less what it keeps), and the
 * AMD device files of the inventory's GPUs. `EdgeAgent`'s `ranks.runtimes` takes it as is:
 *
 *   runtimes: async (context) => [await createDockerRuntime(context)]
 */
import type { EdgeIsolation, Host } from '@gpunet/contracts';
import Docker from 'dockerode';
import type { Policy } from '../../domain/policy/policy';
import { type InventoryGpu, readAmdDevices } from './docker-host';
import { NO_AMD_DEVICES, type SandboxLimits } from './docker-sandbox';
import { DockerRuntime, type DockerRuntimeLog, type DockerRuntimeOptions } from './docker.runtime';
import { probeDockerIsolation } from './isolation';

/** The part of the edge's `RankRuntimeContext` the docker runtime needs. */
export interface DockerRuntimeContext {
  readonly edgeId: string;
  readonly policy: Pick<
    Policy,
    'images' | 'reserveCpuMillicores' | 'reserveMemoryBytes' | 'workspaceBytesPerRank' | 'sandboxRuntime'
  >;
  readonly host: Pick<Host, 'cpu' | 'memoryBytes'>;
  readonly inventory: { readonly gpus: readonly InventoryGpu[]; readonly simulated: boolean };
  readonly log: DockerRuntimeLog;
}

/** What one rank may have at most: the host less what the provider keeps for itself. */
export const sandboxLimitsFor = (
  policy: Pick<Policy, 'images' | 'reserveCpuMillicores' | 'reserveMemoryBytes'>,
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
  if (context.policy.workspaceBytesPerRank === null)
    context.log('warn', 'disk.workspace_per_rank is unlimited: a rank may fill the disk of this host');
  return new DockerRuntime({
    edgeId: context.edgeId,
    allowedImages: context.policy.images,
    limits: sandboxLimitsFor(context.policy, context.host),
    workspaceBytes: context.policy.workspaceBytesPerRank,
    amd: amd.devices,
    simulatedGpus: simulated,
    ociRuntime: context.policy.sandboxRuntime,
    log: context.log,
    ...overrides,
  });
};

/**
 * The OCI runtime the docker runtime creates rank containers with (`HostConfig.Runtime`) under this
 * policy: `runsc` when `sandbox.runtime` says so; null for `runc`, where the runtime names none and
 * the engine's `DefaultRuntime` runs them (a host whose default is `nvidia` keeps it). The reported
 * isolation follows it.
 */
export const ociRuntimeFor = (policy: Pick<Policy, 'sandboxRuntime'>): string | null =>
  policy.sandboxRuntime === 'runsc' ? 'runsc' : null;

/**
 * The isolation of the docker runtime under this policy, from the engine's own `docker info`
 * (`EdgeAgentOptions.isolation` takes it as is). Default engine: `new Docker()`, as the runtime's.
 */
export const dockerIsolationFor = (
  policy: Policy,
  docker: Pick<Docker, 'info'> = new Docker(),
): Promise<EdgeIsolation> => probeDockerIsolation(docker, ociRuntimeFor(policy));
