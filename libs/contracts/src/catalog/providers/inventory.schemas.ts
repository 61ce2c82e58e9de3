import { z } from 'zod';
import { text } from '../primitives';
import { ByteCountSchema } from './providers.schemas';

export const ComputeCapabilityValueSchema = z.strictObject({
  major: z.int().min(1).max(99),
  minor: z.int().min(0).max(9),
});

/** One MIG instance of an NVIDIA GPU in MIG mode. */
export const MigDeviceSchema = z.strictObject({
  uuid: text(128),
  /** `3g.40gb`. */
  profile: text(32),
});

/** One GPU as an edge detected (or, simulated, declared) it. */
export const GpuSchema = z.strictObject({
  /** Device index of its vendor's tool (`nvidia-smi` / `rocm-smi`); unique per vendor on a host. */
  index: z.int().min(0).max(1023),
  /** `GPU-…` (NVIDIA), the AMD unique id (`AMD-0x…`), or a stable id derived from the PCI address. */
  uuid: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$/, 'must be 1-128 of A-Z a-z 0-9 : . _ -'),
  vendor: z.enum(['nvidia', 'amd']),
  /** The name the driver reports: `NVIDIA H100 80GB HBM3`, `AMD Instinct MI250X`. */
  model: text(128),
  /** Total device memory (never the CPU-visible BAR window). */
  vramBytes: ByteCountSchema,
  driverVersion: text(64).nullable(),
  /** CUDA version the driver supports (`12.4`); NVIDIA only. */
  cudaVersion: text(32).nullable(),
  computeCapability: ComputeCapabilityValueSchema.nullable(),
  /** ROCm version (`6.1.2`); AMD only. */
  rocmVersion: text(32).nullable(),
  /** LLVM gfx target (`gfx90a`); AMD only. */
  architecture: text(32).nullable(),
  /** `00000000:18:00.0`. */
  pciBusId: text(32).nullable(),
  mig: z.strictObject({ enabled: z.boolean(), devices: z.array(MigDeviceSchema).max(7) }),
});
export type Gpu = z.infer<typeof GpuSchema>;

/** How two GPUs of one host are connected (`nvidia-smi topo -m`, `rocm-smi --showtopotype`). */
export const GpuLinkSchema = z.strictObject({
  /** Both GPUs are this vendor's (indices are per vendor). */
  vendor: z.enum(['nvidia', 'amd']),
  /** GPU indices, `a < b`. */
  a: z.int().min(0).max(1023),
  b: z.int().min(0).max(1023),
  /** `nvlink` / `xgmi`: a direct GPU link; `pix` … `sys`: PCIe paths from near to far. */
  kind: z.enum(['nvlink', 'xgmi', 'pix', 'pxb', 'phb', 'node', 'sys', 'unknown']),
  /** Bonded NVLinks (`NV18` → 18); null for other kinds. */
  lanes: z.int().min(1).max(64).nullable(),
});
export type GpuLink = z.infer<typeof GpuLinkSchema>;

export const DetectionBackendSchema = z.strictObject({
  name: z.enum(['nvidia', 'amd', 'simulated']),
  /** `absent`: the tool is not installed; `failed`: it ran and failed (see detail). */
  status: z.enum(['ok', 'absent', 'failed']),
  detail: z.string().max(1024).nullable(),
});

/** The GPUs of a host. Stable: volatile readings (utilization, temperatures) are not part of it. */
export const InventorySchema = z.strictObject({
  /** True when the GPUs were declared in an inventory file, not detected: never real hardware. */
  simulated: z.boolean(),
  backends: z.array(DetectionBackendSchema).max(4),
  gpus: z.array(GpuSchema).max(64),
  links: z.array(GpuLinkSchema).max(2016),
});
export type Inventory = z.infer<typeof InventorySchema>;
