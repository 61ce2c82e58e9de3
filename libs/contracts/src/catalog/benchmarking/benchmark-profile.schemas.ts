import { z } from 'zod';
import { text, UtcTimestampSchema } from '../primitives';
import { RateSchema, RequestIdSchema } from './benchmarking.schemas';

/** The version of the profile format below; a new shape is a new number (and a new message version). */
export const BENCHMARK_PROFILE_VERSION = 1;

/** Dense matrix-multiply throughput per precision; null where not measured (unsupported or skipped). */
export const MatmulTflopsSchema = z.strictObject({
  /** fp32 with TF32 tensor cores disabled. */
  fp32: RateSchema.nullable(),
  /** fp32 inputs on TF32 tensor cores (NVIDIA Ampere and later). */
  tf32: RateSchema.nullable(),
  fp16: RateSchema.nullable(),
  bf16: RateSchema.nullable(),
});
export type MatmulTflops = z.infer<typeof MatmulTflopsSchema>;

/** Which precisions a profile measures, in the order reports print them. */
export const MATMUL_PRECISIONS = ['fp32', 'tf32', 'fp16', 'bf16'] as const;
export type MatmulPrecision = (typeof MATMUL_PRECISIONS)[number];

/** One measured device: a GPU, or the host CPU where the host has none. */
export const BenchmarkDeviceSchema = z.strictObject({
  /** The vendor tool's index for a GPU (matches the inventory), 0 for the CPU. */
  index: z.int().min(0).max(1023),
  /** The GPU's uuid as the inventory names it (`GPU-…`); null for a CPU or when the runtime hides it. */
  uuid: z.string().max(128).nullable(),
  /** What the runtime calls the device (`NVIDIA H200`, the CPU model). */
  name: text(256),
  kind: z.enum(['cuda', 'rocm', 'cpu', 'simulated']),
  /** Device memory the runtime sees (the host's RAM for a CPU); null when unknown. */
  memoryBytes: z.int().min(0).nullable(),
  matmulTflops: MatmulTflopsSchema,
  /** Device-memory copy bandwidth (read + write bytes per second). */
  memoryBandwidthGBps: RateSchema.nullable(),
  /** Pinned host memory → device, and back; null for a CPU. */
  hostToDeviceGBps: RateSchema.nullable(),
  deviceToHostGBps: RateSchema.nullable(),
});
export type BenchmarkDevice = z.infer<typeof BenchmarkDeviceSchema>;

/** Copy bandwidth between two GPUs of one host (NVLink/xGMI, or PCIe through the host). */
export const PeerBandwidthSchema = z.strictObject({
  /** Device indices, `a < b`. */
  a: z.int().min(0).max(1023),
  b: z.int().min(0).max(1023),
  /** a → b copy bandwidth. */
  GBps: RateSchema,
  /** Whether the runtime could map peer memory directly (P2P); false: staged through the host. */
  p2p: z.boolean(),
});
export type PeerBandwidth = z.infer<typeof PeerBandwidthSchema>;

/**
 * One run of the edge's benchmark runner: versioned, time-stamped, valid until `expiresAt`. `kind`
 * says what was measured — `gpu`: real GPUs; `cpu`: a host without GPUs, measured for real on its
 * CPU; `simulated`: a simulated edge's declared figures with noise, never a measurement.
 */
export const BenchmarkProfileSchema = z.strictObject({
  profileVersion: z.literal(BENCHMARK_PROFILE_VERSION),
  /** Unique per run (the runner makes it). */
  profileId: RequestIdSchema,
  kind: z.enum(['gpu', 'cpu', 'simulated']),
  runner: z.strictObject({
    /** `gpu-bench` (the torch script) or `simulated`. */
    name: text(64),
    version: text(32),
    python: z.string().max(64).nullable(),
    torch: z.string().max(64).nullable(),
    /** `cuda 12.4`, `rocm 6.1`, `cpu`. */
    backend: text(64),
    /** Threads used on a CPU run; null for GPU runs. */
    threads: z.int().min(1).max(4096).nullable(),
  }),
  measuredAt: UtcTimestampSchema,
  expiresAt: UtcTimestampSchema,
  durationMs: z.int().min(0),
  devices: z.array(BenchmarkDeviceSchema).max(64),
  peers: z.array(PeerBandwidthSchema).max(2016),
  /** Anything a person should know (a suite skipped, a precision unsupported). */
  notes: z.array(z.string().max(512)).max(32),
});
export type BenchmarkProfile = z.infer<typeof BenchmarkProfileSchema>;
