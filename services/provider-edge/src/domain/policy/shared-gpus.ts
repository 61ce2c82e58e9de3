import {
  type Host,
  type Inventory,
  modelMatches,
  type PolicySummary,
  type ValidationIssue,
} from '@gpunet/contracts';
import type { Policy } from './policy';

export interface SharedGpus {
  /** UUIDs of the GPUs jobs may get. */
  readonly uuids: readonly string[];
  /** The policy names GPUs this host does not have (or ambiguously): the edge refuses to start. */
  readonly errors: readonly ValidationIssue[];
  /** GPUs left out for a reason the provider should know (MIG mode). */
  readonly warnings: readonly ValidationIssue[];
}

/**
 * Which detected GPUs the policy shares. A selector that matches no GPU is an error, not a silent
 * omission: a provider must never believe a GPU is onboarded when it is not (NuNet DMS #1073). GPUs
 * in MIG mode are not shared whole (a rank needs the whole device); the provider is told.
 */
export const resolveSharedGpus = (policy: Policy, inventory: Inventory): SharedGpus => {
  const errors: ValidationIssue[] = [];
  const warnings: ValidationIssue[] = [];
  const chosen = new Set<string>();
  if (policy.share === 'all') {
    for (const g of inventory.gpus) chosen.add(g.uuid);
  } else {
    for (const s of policy.share) {
      if (s.by === 'uuid') {
        const gpu = inventory.gpus.find((g) => g.uuid.toLowerCase() === s.uuid.toLowerCase());
        if (gpu) chosen.add(gpu.uuid);
        else
          errors.push({
            path: s.path,
            message: `no GPU with UUID ${s.uuid} on this host (${describe(inventory)})`,
          });
        continue;
      }
      const matches = inventory.gpus.filter(
        (g) => g.index === s.index && (s.vendor === null || g.vendor === s.vendor),
      );
      if (matches.length === 1) chosen.add(matches[0]!.uuid);
      else if (matches.length === 0)
        errors.push({
          path: s.path,
          message: `no ${s.vendor === null ? '' : `${s.vendor} `}GPU with index ${s.index} on this host (${describe(inventory)})`,
        });
      else
        errors.push({
          path: s.path,
          message: `index ${s.index} is ambiguous on this mixed host: write nvidia:${s.index} or amd:${s.index}`,
        });
    }
  }
  for (const g of inventory.gpus) {
    if (chosen.has(g.uuid) && g.mig.enabled) {
      chosen.delete(g.uuid);
      warnings.push({
        path: 'gpus.share',
        message: `GPU ${g.vendor}:${g.index} (${g.uuid}) is in MIG mode and is not shared: disable MIG to share it whole`,
      });
    }
  }
  return { uuids: inventory.gpus.filter((g) => chosen.has(g.uuid)).map((g) => g.uuid), errors, warnings };
};

const describe = (inventory: Inventory): string =>
  inventory.gpus.length === 0
    ? 'it has no GPU'
    : `it has ${inventory.gpus.map((g) => `${g.vendor}:${g.index}`).join(', ')}`;

/** CPU and memory jobs may use in total: the host's, less what the owner keeps. */
export const shareableResources = (
  policy: Policy,
  host: Pick<Host, 'cpu' | 'memoryBytes'>,
): { cpuMillicores: number; memoryBytes: number } => ({
  cpuMillicores: Math.max(0, host.cpu.logicalCores * 1000 - policy.reserveCpuMillicores),
  memoryBytes: Math.max(0, host.memoryBytes - policy.reserveMemoryBytes),
});

/** The floor per GPU-hour for a GPU of this model, in minor units; null: none. */
export const floorFor = (policy: Policy, model: string): bigint | null =>
  policy.pricing.floors.find((f) => modelMatches(model, f.model))?.perGpuHourMinor ??
  policy.pricing.defaultMinor;

/** What the control plane is told of the policy (it proposes GPUs; the edge still decides). */
export const summarizePolicy = (policy: Policy, shared: readonly string[], host: Host): PolicySummary => {
  const resources = shareableResources(policy, host);
  return {
    sharedGpuUuids: [...shared],
    maxGpusPerJob: policy.maxGpusPerJob,
    maxJobDurationMs: policy.maxJobDurationMs,
    cpuMillicores: resources.cpuMillicores,
    memoryBytes: resources.memoryBytes,
    images: [...policy.images],
    pricing: {
      asset: policy.pricing.asset,
      defaultFloorMinor: policy.pricing.defaultMinor === null ? null : policy.pricing.defaultMinor.toString(),
      floors: policy.pricing.floors.map((f) => ({
        model: f.model,
        perGpuHourMinor: f.perGpuHourMinor.toString(),
      })),
    },
    subnets: [...policy.subnets],
    availability: policy.availability
      ? {
          timeZone: policy.availability.timeZone,
          windows: policy.availability.windows.map((w) => ({ ...w, days: [...w.days] })),
        }
      : null,
    location: { ...policy.location },
  };
};
