import {
  BENCHMARK_PROFILE_VERSION,
  type BenchmarkDevice,
  type BenchmarkProfile,
  type GpuLink,
  MATMUL_PRECISIONS,
  type MatmulTflops,
  type PeerBandwidth,
} from '@gpunet/contracts';
import { findReference, type GpuReference, TYPICAL_EFFICIENCY } from './gpu-reference';

/** A GPU of a simulated edge, as its declared inventory names it. */
export interface SimulatedGpu {
  readonly index: number;
  readonly uuid: string;
  readonly vendor: 'nvidia' | 'amd';
  /** The claimed model (`NVIDIA H100 80GB HBM3`). */
  readonly model: string;
  readonly vramBytes: number;
}

/**
 * How a simulated GPU *performs*, when that differs from what it claims — the way to stand in for a
 * dishonest or degraded provider in tests and demos. Default: like the claimed model.
 */
export interface DeclaredPerformance {
  /** Perform like this model instead (`T4`): its reference figures × typical efficiency. */
  readonly behavesLike?: string;
  /** Exact figures, overriding the above per field. */
  readonly figures?: Partial<MatmulTflops> & {
    readonly memoryBandwidthGBps?: number;
    readonly hostToDeviceGBps?: number;
    readonly deviceToHostGBps?: number;
    readonly memoryBytes?: number;
  };
}

export interface SimulatedProfileInput {
  readonly gpus: readonly SimulatedGpu[];
  readonly links?: readonly GpuLink[];
  readonly declared?: (gpu: SimulatedGpu) => DeclaredPerformance | undefined;
  /** Uniform [0, 1) source for the noise. */
  readonly rng: () => number;
  readonly nowMs: number;
  readonly ttlMs: number;
  readonly profileId: string;
  /** Relative noise amplitude: each figure is scaled by 1 ± noise. Default 0.03. */
  readonly noise?: number;
}

export const SIMULATED_NOTE = 'SIMULATED: declared figures with noise, not a measurement';

const sig4 = (x: number): number => Number(x.toPrecision(4));

/** One NVLink 4 link carries 25 GB/s each way; xGMI 3 links about 50 GB/s. */
const NVLINK_LANE_GBPS = 25;
const XGMI_GBPS = 50;

/**
 * The profile a simulated edge reports: its declared figures (the claimed model's reference figures
 * × typical efficiency, unless `declared` says otherwise) with noise, `kind: "simulated"` and a note
 * saying so. It never pretends to be a measurement.
 */
export const simulatedProfile = (input: SimulatedProfileInput): BenchmarkProfile => {
  const noise = input.noise ?? 0.03;
  const jitter = (x: number | null | undefined): number | null =>
    x === null || x === undefined ? null : sig4(x * (1 + noise * (2 * input.rng() - 1)));
  const notes = [SIMULATED_NOTE];
  const refs = new Map<number, GpuReference | null>();
  const devices: BenchmarkDevice[] = input.gpus.map((gpu) => {
    const declared = input.declared?.(gpu);
    const ref = findReference(declared?.behavesLike ?? gpu.model);
    refs.set(gpu.index, ref);
    if (ref === null && declared?.figures === undefined)
      notes.push(`GPU ${gpu.index}: no reference figures for "${declared?.behavesLike ?? gpu.model}"`);
    if (declared?.behavesLike !== undefined)
      notes.push(`GPU ${gpu.index}: declared to perform like ${declared.behavesLike}`);
    const f = declared?.figures ?? {};
    const tflops = Object.fromEntries(
      MATMUL_PRECISIONS.map((p) => {
        const peak = ref?.tflops[p];
        return [p, jitter(f[p] ?? (peak == null ? null : peak * TYPICAL_EFFICIENCY.matmul))];
      }),
    ) as MatmulTflops;
    const host = ref === null ? null : ref.hostLinkGBps * TYPICAL_EFFICIENCY.hostLink;
    return {
      index: gpu.index,
      uuid: gpu.uuid,
      name: gpu.model,
      kind: 'simulated',
      memoryBytes: f.memoryBytes ?? gpu.vramBytes,
      matmulTflops: tflops,
      memoryBandwidthGBps: jitter(
        f.memoryBandwidthGBps ??
          (ref === null ? null : ref.memoryBandwidthGBps * TYPICAL_EFFICIENCY.memoryBandwidth),
      ),
      hostToDeviceGBps: jitter(f.hostToDeviceGBps ?? host),
      deviceToHostGBps: jitter(f.deviceToHostGBps ?? host),
    };
  });
  const peers: PeerBandwidth[] = [];
  const sorted = [...input.gpus].sort((a, b) => a.index - b.index);
  for (let i = 0; i < sorted.length; i++)
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i]!;
      const b = sorted[j]!;
      const link = input.links?.find((l) => l.a === a.index && l.b === b.index && l.vendor === a.vendor);
      const direct = link?.kind === 'nvlink' || link?.kind === 'xgmi';
      const raw =
        link?.kind === 'nvlink'
          ? (link.lanes ?? 1) * NVLINK_LANE_GBPS
          : link?.kind === 'xgmi'
            ? XGMI_GBPS
            : (refs.get(a.index)?.hostLinkGBps ?? 12) / 2;
      peers.push({ a: a.index, b: b.index, GBps: jitter(raw * TYPICAL_EFFICIENCY.peer)!, p2p: direct });
    }
  return {
    profileVersion: BENCHMARK_PROFILE_VERSION,
    profileId: input.profileId,
    kind: 'simulated',
    runner: {
      name: 'simulated',
      version: '1.0.0',
      python: null,
      torch: null,
      backend: 'simulated',
      threads: null,
    },
    measuredAt: new Date(input.nowMs).toISOString(),
    expiresAt: new Date(input.nowMs + input.ttlMs).toISOString(),
    durationMs: 0,
    devices,
    peers,
    notes: notes.slice(0, 32),
  };
};
