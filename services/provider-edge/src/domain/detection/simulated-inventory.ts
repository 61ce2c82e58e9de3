import { type GpuLink, toIssues, type ValidationIssue } from '@gpunet/contracts';
import { parseSize } from '@gpunet/ensemble-spec';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { type BackendResult, type DetectedGpu, MIB } from './detection.types';
import { parseComputeCapability } from './nvidia-smi.parser';

/** A size: `80GiB`, `24GB`, or a number of MiB (`81559`, as nvidia-smi prints memory). */
const Size = z.union([
  z.string().max(32),
  z
    .int()
    .min(0)
    .max(64 * 1024 * 1024),
]);

const GpuGroup = z.strictObject({
  /** The name a real driver would report: `NVIDIA H100 80GB HBM3`. */
  model: z.string().min(1).max(128),
  vendor: z.enum(['nvidia', 'amd']).optional(),
  count: z.int().min(1).max(64).default(1),
  vram: Size,
  compute_capability: z.string().max(8).optional(),
  cuda_version: z.string().max(32).optional(),
  driver_version: z.string().max(64).optional(),
  rocm_version: z.string().max(32).optional(),
  architecture: z.string().max(32).optional(),
  /** `nvlink`/`xgmi`: every GPU of this group is directly linked to the others; `pcie`: through the host. */
  interconnect: z.enum(['nvlink', 'xgmi', 'pcie']).default('pcie'),
  /** Bonded NVLinks per pair, for `nvlink`. Default 18 (H100 SXM). */
  nvlink_lanes: z.int().min(1).max(64).default(18),
});

/** Host facts a simulated edge may declare instead of the machine's (to stand in for a big server). */
const HostOverrides = z.strictObject({
  cpu_cores: z.int().min(1).max(4096).optional(),
  memory: Size.optional(),
  disk_free: Size.optional(),
  cpu_architecture: z.enum(['amd64', 'arm64']).optional(),
});

export const SimulatedInventorySchema = z.strictObject({
  /** Optional marker; a declared inventory is simulated whatever it says. */
  simulated: z.literal(true).optional(),
  /**
   * What the simulated GPUs' ids start with (default `SIM`): ids must be unique across the
   * network, so every simulated host of one cluster needs its own (`SIM-alpha` → `SIM-alpha-nvidia-0`).
   */
  uuid_prefix: z
    .string()
    .regex(/^SIM[A-Za-z0-9-]{0,60}$/, 'must start with SIM and use only letters, digits and -')
    .optional(),
  gpus: z.array(GpuGroup).min(1).max(16),
  host: HostOverrides.optional(),
});

export interface HostOverride {
  readonly logicalCores?: number;
  readonly memoryBytes?: number;
  readonly diskFreeBytes?: number;
  readonly architecture?: string;
}

export interface SimulatedInventory {
  readonly backend: BackendResult;
  readonly host: HostOverride;
}

export type SimulatedInventoryResult =
  | { readonly ok: true; readonly value: SimulatedInventory }
  | { readonly ok: false; readonly issues: readonly ValidationIssue[] };

const sizeBytes = (value: string | number, path: string, issues: ValidationIssue[]): number => {
  if (typeof value === 'number') return value * MIB;
  const parsed = parseSize(value.trim());
  if (!parsed.ok) {
    issues.push({ path, message: parsed.reason });
    return 0;
  }
  return parsed.value;
};

/**
 * Reads a declared inventory file (YAML or JSON) for the simulated backend. Every problem comes back
 * with its field path (`gpus[1].vram: …`); nothing throws. GPUs are numbered per vendor in file order
 * and get ids `<uuid_prefix>-<vendor>-<index>` (`SIM-nvidia-0` by default).
 */
export const parseSimulatedInventory = (text: string): SimulatedInventoryResult => {
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100, logLevel: 'error' });
  } catch (e) {
    return {
      ok: false,
      issues: [{ path: '', message: `not YAML/JSON: ${e instanceof Error ? e.message : String(e)}` }],
    };
  }
  const parsed = SimulatedInventorySchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: toIssues(parsed.error) };
  const issues: ValidationIssue[] = [];
  const gpus: DetectedGpu[] = [];
  const links: GpuLink[] = [];
  const next = { nvidia: 0, amd: 0 };
  parsed.data.gpus.forEach((group, g) => {
    const vendor = group.vendor ?? (/\b(AMD|INSTINCT|RADEON)\b/i.test(group.model) ? 'amd' : 'nvidia');
    const vramBytes = sizeBytes(group.vram, `gpus[${g}].vram`, issues);
    const cc =
      group.compute_capability === undefined ? null : parseComputeCapability(group.compute_capability);
    if (group.compute_capability !== undefined && cc === null)
      issues.push({ path: `gpus[${g}].compute_capability`, message: 'must look like "9.0"' });
    if (vendor === 'amd' && (group.interconnect === 'nvlink' || group.compute_capability !== undefined))
      issues.push({ path: `gpus[${g}]`, message: 'AMD GPUs have no NVLink or CUDA compute capability' });
    const first = next[vendor];
    for (let i = 0; i < group.count; i++) {
      const index = next[vendor]++;
      gpus.push({
        index,
        uuid: `${parsed.data.uuid_prefix ?? 'SIM'}-${vendor}-${index}`,
        vendor,
        model: group.model,
        vramBytes,
        driverVersion: group.driver_version ?? null,
        cudaVersion: vendor === 'nvidia' ? (group.cuda_version ?? null) : null,
        computeCapability: vendor === 'nvidia' ? cc : null,
        rocmVersion: vendor === 'amd' ? (group.rocm_version ?? null) : null,
        architecture: vendor === 'amd' ? (group.architecture ?? null) : null,
        pciBusId: null,
        mig: { enabled: false, devices: [] },
        utilizationPercent: 0,
      });
    }
    if (group.interconnect !== 'pcie') {
      for (let a = first; a < next[vendor]; a++)
        for (let b = a + 1; b < next[vendor]; b++)
          links.push({
            vendor,
            a,
            b,
            kind: group.interconnect,
            lanes: group.interconnect === 'nvlink' ? group.nvlink_lanes : null,
          });
    }
  });
  if (gpus.length > 64)
    issues.push({ path: 'gpus', message: `at most 64 GPUs per host, declared ${gpus.length}` });
  const h = parsed.data.host;
  const host: HostOverride = {
    ...(h?.cpu_cores !== undefined ? { logicalCores: h.cpu_cores } : {}),
    ...(h?.memory !== undefined ? { memoryBytes: sizeBytes(h.memory, 'host.memory', issues) } : {}),
    ...(h?.disk_free !== undefined
      ? { diskFreeBytes: sizeBytes(h.disk_free, 'host.disk_free', issues) }
      : {}),
    ...(h?.cpu_architecture !== undefined ? { architecture: h.cpu_architecture } : {}),
  };
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: {
      backend: {
        name: 'simulated',
        status: 'ok',
        detail: 'declared inventory: simulated GPUs, not real hardware',
        gpus,
        links: links.slice(0, 2016),
        problems: [],
      },
      host,
    },
  };
};
