import type { Precision } from '../model/precision';
import type { ComputeCapability, GpuVendor, IntraHostLink } from '../model/snapshot-input';

/**
 * Public datasheet figures (dense, no sparsity) for GPUs seen in decentralized networks and in the
 * Alibaba trace, used by the synthetic clusters and the trace replay. Prices are typical 2024–25
 * rental rates in micro-dollars (6-decimal minor units) per GPU-hour.
 */
export interface GpuModelSpec {
  readonly model: string;
  readonly vendor: GpuVendor;
  readonly vramBytes: number;
  readonly computeCapability: ComputeCapability | null;
  readonly amdArch: string | null;
  readonly tflops: Readonly<Partial<Record<Precision, number>>>;
  /** The usual link between the GPUs of one host with this model. */
  readonly intraHost: IntraHostLink;
  readonly pricePerGpuHourMinor: number;
}

const GB = 1e9;
const GiB = 2 ** 30;
const nvlink = (gbytesPerS: number): IntraHostLink => ({
  kind: 'nvlink',
  bandwidthBps: gbytesPerS * 8e9,
  latencyUs: 2,
});
const xgmi = (gbytesPerS: number): IntraHostLink => ({
  kind: 'xgmi',
  bandwidthBps: gbytesPerS * 8e9,
  latencyUs: 3,
});
const pcie = (gbytesPerS: number): IntraHostLink => ({
  kind: 'pcie',
  bandwidthBps: gbytesPerS * 8e9,
  latencyUs: 8,
});

const nv = (
  model: string,
  vramBytes: number,
  cc: [number, number],
  tflops: Partial<Record<Precision, number>>,
  intraHost: IntraHostLink,
  price: number,
): GpuModelSpec => ({
  model,
  vendor: 'nvidia',
  vramBytes,
  computeCapability: { major: cc[0], minor: cc[1] },
  amdArch: null,
  tflops,
  intraHost,
  pricePerGpuHourMinor: price,
});

const amd = (
  model: string,
  vramBytes: number,
  arch: string,
  tflops: Partial<Record<Precision, number>>,
  intraHost: IntraHostLink,
  price: number,
): GpuModelSpec => ({
  model,
  vendor: 'amd',
  vramBytes,
  computeCapability: null,
  amdArch: arch,
  tflops,
  intraHost,
  pricePerGpuHourMinor: price,
});

export const GPU_CATALOG: Readonly<Record<string, GpuModelSpec>> = Object.freeze({
  'H100-SXM': nv(
    'H100-SXM',
    80 * GB,
    [9, 0],
    { fp64: 67, fp32: 67, tf32: 495, bf16: 989, fp16: 989, fp8: 1979, int8: 1979 },
    nvlink(450),
    2_490_000,
  ),
  'A100-80G': nv(
    'A100-80G',
    80 * GB,
    [8, 0],
    { fp64: 19.5, fp32: 19.5, tf32: 156, bf16: 312, fp16: 312, int8: 624 },
    nvlink(300),
    1_400_000,
  ),
  'A100-40G': nv(
    'A100-40G',
    40 * GB,
    [8, 0],
    { fp64: 19.5, fp32: 19.5, tf32: 156, bf16: 312, fp16: 312, int8: 624 },
    pcie(25),
    1_000_000,
  ),
  L40S: nv(
    'L40S',
    48 * GB,
    [8, 9],
    { fp32: 91.6, tf32: 183, bf16: 362, fp16: 362, fp8: 733, int8: 733 },
    pcie(25),
    800_000,
  ),
  'RTX-A6000': nv(
    'RTX-A6000',
    48 * GB,
    [8, 6],
    { fp32: 38.7, tf32: 77, bf16: 155, fp16: 155, int8: 310 },
    pcie(25),
    500_000,
  ),
  'RTX-4090': nv(
    'RTX-4090',
    24 * GB,
    [8, 9],
    { fp32: 82.6, tf32: 82.6, bf16: 165, fp16: 165, fp8: 330, int8: 660 },
    pcie(12),
    350_000,
  ),
  'RTX-3090': nv(
    'RTX-3090',
    24 * GB,
    [8, 6],
    { fp32: 35.6, tf32: 35.6, bf16: 71, fp16: 71, int8: 284 },
    pcie(12),
    200_000,
  ),
  'V100-32G': nv('V100-32G', 32 * GB, [7, 0], { fp64: 7.8, fp32: 15.7, fp16: 125 }, nvlink(150), 400_000),
  T4: nv('T4', 16 * GB, [7, 5], { fp32: 8.1, fp16: 65, int8: 130 }, pcie(12), 150_000),
  MI300X: amd(
    'MI300X',
    192 * GB,
    'gfx942',
    { fp64: 81.7, fp32: 163.4, tf32: 653, bf16: 1307, fp16: 1307, fp8: 2615 },
    xgmi(448),
    2_200_000,
  ),
  MI250X: amd(
    'MI250X',
    128 * GB,
    'gfx90a',
    { fp64: 47.9, fp32: 47.9, bf16: 383, fp16: 383, int8: 383 },
    xgmi(200),
    1_000_000,
  ),
  // The Alibaba GPU trace's models (cluster-trace-gpu-v2023). G2/G3 are undisclosed there; we take
  // them as A100-40G-PCIe-class and A100-80G-SXM-class parts (assumption, see docs/scheduling.md).
  P100: nv('P100', 16 * GiB, [6, 0], { fp64: 4.7, fp32: 9.3, fp16: 18.7 }, pcie(12), 100_000),
  V100M16: nv('V100M16', 16 * GiB, [7, 0], { fp64: 7.8, fp32: 15.7, fp16: 125 }, nvlink(150), 300_000),
  V100M32: nv('V100M32', 32 * GiB, [7, 0], { fp64: 7.8, fp32: 15.7, fp16: 125 }, nvlink(150), 400_000),
  A10: nv(
    'A10',
    24 * GiB,
    [8, 6],
    { fp32: 31.2, tf32: 62.5, bf16: 125, fp16: 125, int8: 250 },
    pcie(25),
    400_000,
  ),
  G1: nv('G1', 16 * GiB, [7, 5], { fp32: 8.1, fp16: 65, int8: 130 }, pcie(12), 150_000),
  G2: nv(
    'G2',
    40 * GiB,
    [8, 0],
    { fp64: 19.5, fp32: 19.5, tf32: 156, bf16: 312, fp16: 312, int8: 624 },
    pcie(25),
    1_000_000,
  ),
  G3: nv(
    'G3',
    80 * GiB,
    [8, 0],
    { fp64: 19.5, fp32: 19.5, tf32: 156, bf16: 312, fp16: 312, int8: 624 },
    nvlink(300),
    1_400_000,
  ),
});
