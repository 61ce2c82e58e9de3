import { type MatmulPrecision, modelWords } from '@gpunet/contracts';

/**
 * Published figures of GPU models — dense (no sparsity) peak matmul TFLOPS per precision and memory
 * bandwidth, from the vendors' data sheets — and how far below them a measurement may fall before a
 * claim counts as false.
 *
 * Measurements never reach the peaks: large cuBLAS/rocBLAS GEMMs typically reach 60–85% of them and
 * device copies 80–90% of the memory bandwidth, less under power or clock limits. The floors
 * (`tolerance`) sit well below that, so that noise, drivers and thermals pass and only a device that
 * is a different (slower) one fails. Where a name covers several variants (`H100` = SXM, PCIe, NVL),
 * the entry for the bare name carries the slowest variant's figures: a verifier must not accuse a
 * provider on an ambiguity.
 */
export interface GpuReference {
  /** Shown in evidence: `H100 SXM`. */
  readonly name: string;
  /** Word sequences of the reported name that select this entry (`modelWords` form), most specific first. */
  readonly matches: readonly string[];
  readonly tflops: Readonly<Record<MatmulPrecision, number | null>>;
  readonly memoryBandwidthGBps: number;
  readonly memoryBytes: number;
  /** One direction of the host link (PCIe generation × lanes), GB/s; for simulated host↔device figures. */
  readonly hostLinkGBps: number;
  /** Lowest acceptable measured / published ratio. */
  readonly tolerance: { readonly matmul: number; readonly memoryBandwidth: number };
}

/** Bumped whenever a figure changes; quoted in every mismatch's evidence. */
export const REFERENCE_TABLE_VERSION = 'gpu-reference/2026-01 (vendor data sheets, dense peaks)';

const GB = 1e9;
const standard = { matmul: 0.5, memoryBandwidth: 0.6 } as const;
/** Consumer boards boost and throttle far more than data-centre parts. */
const consumer = { matmul: 0.4, memoryBandwidth: 0.55 } as const;

const entry = (
  name: string,
  matches: readonly string[],
  [fp32, tf32, fp16, bf16]: readonly [number | null, number | null, number | null, number | null],
  memoryBandwidthGBps: number,
  memoryGB: number,
  hostLinkGBps: number,
  tolerance: GpuReference['tolerance'] = standard,
): GpuReference => ({
  name,
  matches,
  tflops: { fp32, tf32, fp16, bf16 },
  memoryBandwidthGBps,
  memoryBytes: memoryGB * GB,
  hostLinkGBps,
  tolerance,
});

/** Most specific entries first: the first whose words appear in the reported name wins. */
export const GPU_REFERENCE: readonly GpuReference[] = [
  entry('H200', ['H200'], [67, 494.7, 989.4, 989.4], 4800, 141, 55),
  entry('H100 SXM', ['H100 SXM', 'H100 80GB HBM3'], [67, 494.7, 989.4, 989.4], 3350, 80, 55),
  entry('H100 NVL', ['H100 NVL'], [60, 417.5, 835, 835], 3900, 94, 55),
  entry('H100 PCIe', ['H100 PCIE', 'H100'], [51.2, 378, 756, 756], 2000, 80, 55),
  entry('A100 SXM 80GB', ['A100 SXM4 80GB'], [19.5, 156, 312, 312], 2039, 80, 25),
  entry('A100 PCIe 80GB', ['A100 80GB PCIE', 'A100 PCIE 80GB'], [19.5, 156, 312, 312], 1935, 80, 25),
  entry('A100 40GB', ['A100'], [19.5, 156, 312, 312], 1555, 40, 25),
  entry('L40S', ['L40S'], [91.6, 183, 362, 362], 864, 48, 25),
  entry('L4', ['L4'], [30.3, 60, 121, 121], 300, 24, 25),
  entry('A10', ['A10'], [31.2, 62.5, 125, 125], 600, 24, 25),
  entry('T4', ['T4'], [8.1, null, 65, null], 320, 16, 12),
  entry('V100', ['V100'], [14, null, 112, null], 900, 16, 12),
  entry('RTX 4090', ['RTX 4090'], [82.6, 82.6, 165.2, 165.2], 1008, 24, 25, consumer),
  entry('RTX 3090', ['RTX 3090'], [35.6, 35.6, 71, 71], 936, 24, 25, consumer),
  entry('MI300X', ['MI300X'], [163.4, null, 1307.4, 1307.4], 5300, 192, 55),
  // rocm-smi lists each of the two dies (GCDs) of an MI250X as a device: half the package's figures.
  entry('MI250X (one GCD)', ['MI250X'], [47.9, null, 191.5, 191.5], 1638, 64, 25),
];

/** The reference entry for a reported GPU name, or null when the table does not know the model. */
export const findReference = (reportedName: string): GpuReference | null => {
  const words = ` ${modelWords(reportedName)} `;
  for (const ref of GPU_REFERENCE) if (ref.matches.some((m) => words.includes(` ${m} `))) return ref;
  return null;
};

/** Fractions of the peaks a healthy device of the model typically measures (for simulated figures). */
export const TYPICAL_EFFICIENCY = { matmul: 0.75, memoryBandwidth: 0.88, hostLink: 0.9, peer: 0.8 } as const;
