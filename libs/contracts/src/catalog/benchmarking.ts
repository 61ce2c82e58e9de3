import { z } from 'zod';
import { defineCommand, defineEvent, type MessageDefinition } from '../message';
import { defineQuery } from '../query';
import { EdgeIdSchema, signedEdgeReportFields, text, UtcTimestampSchema } from './primitives';
import { BenchmarkingStream, CORE_REQUEST_REPLY, EdgeBenchmarkStream } from './streams';

/*
 * Benchmarking (F4). The control plane never believes a GPU's name: it asks each edge to measure its
 * devices (`cmd.edge.{edgeId}.benchmark.v1`) and the links to a bounded sample of peers
 * (`cmd.edge.{edgeId}.probe-links.v1`). Both commands are answered at once over core NATS
 * request/reply (accepted or declined — a benchmark runs for minutes); the edge publishes the results
 * later as signed reports on `edge.{edgeId}.benchmark-reported.v1` / `edge.{edgeId}.links-probed.v1`
 * (stream `EDGE_BENCHMARKS`). `services/benchmarking` consumes them, verifies claims against the
 * measurements and publishes what the scheduler reads on `benchmarking.…`.
 *
 * Units are in field names: `Tflops` (10¹² floating-point operations per second), `GBps` (10⁹ bytes
 * per second, as GPU data sheets print memory bandwidth), `BitsPerSecond` (network throughput), `Us`
 * (microseconds, as the scheduler's network model counts latency), `Bytes`, `Ms`.
 */

// ---------------------------------------------------------------------------------------------------
// Value schemas
// ---------------------------------------------------------------------------------------------------

const rate = z.number().min(0).max(1e7);
/** A request id: one subject token's worth of characters. */
const RequestIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 _ -');

/** The version of the profile format below; a new shape is a new number (and a new message version). */
export const BENCHMARK_PROFILE_VERSION = 1;

/** Dense matrix-multiply throughput per precision; null where not measured (unsupported or skipped). */
export const MatmulTflopsSchema = z.strictObject({
  /** fp32 with TF32 tensor cores disabled. */
  fp32: rate.nullable(),
  /** fp32 inputs on TF32 tensor cores (NVIDIA Ampere and later). */
  tf32: rate.nullable(),
  fp16: rate.nullable(),
  bf16: rate.nullable(),
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
  memoryBandwidthGBps: rate.nullable(),
  /** Pinned host memory → device, and back; null for a CPU. */
  hostToDeviceGBps: rate.nullable(),
  deviceToHostGBps: rate.nullable(),
});
export type BenchmarkDevice = z.infer<typeof BenchmarkDeviceSchema>;

/** Copy bandwidth between two GPUs of one host (NVLink/xGMI, or PCIe through the host). */
export const PeerBandwidthSchema = z.strictObject({
  /** Device indices, `a < b`. */
  a: z.int().min(0).max(1023),
  b: z.int().min(0).max(1023),
  /** a → b copy bandwidth. */
  GBps: rate,
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

/** The suites a benchmark may run; an edge skips what its devices cannot do and says so in `notes`. */
export const BENCHMARK_SUITES = ['matmul', 'memory', 'host-device', 'peer'] as const;
export type BenchmarkSuite = (typeof BENCHMARK_SUITES)[number];

/** Why benchmarking asks for a run: the first, a profile about to expire, new hardware, a random check. */
export const BenchmarkReasonSchema = z.enum([
  'initial',
  'expiring',
  'inventory-changed',
  'spot-check',
  'manual',
]);
export type BenchmarkReason = z.infer<typeof BenchmarkReasonSchema>;

/** Where an edge answers link probes: UDP echo for RTT, TCP sink for throughput. */
export const ProbeEndpointSchema = z.strictObject({
  address: text(64),
  udpPort: z.int().min(1).max(65535),
  tcpPort: z.int().min(1).max(65535),
});
export type ProbeEndpoint = z.infer<typeof ProbeEndpointSchema>;

/** RTT samples of one probe, µs. */
export const RttSummarySchema = z.strictObject({
  minUs: z.number().min(0),
  medianUs: z.number().min(0),
  /** Replies received of `sent`. */
  received: z.int().min(0),
  sent: z.int().min(1),
});
export type RttSummary = z.infer<typeof RttSummarySchema>;

/** One bounded bulk transfer prober → peer. */
export const ThroughputSampleSchema = z.strictObject({
  bitsPerSecond: z.number().min(0),
  bytes: z.int().min(0),
  durationMs: z.number().min(0),
});
export type ThroughputSample = z.infer<typeof ThroughputSampleSchema>;

export const LinkProbeResultSchema = z.strictObject({
  peerId: EdgeIdSchema,
  /** `address:port` that answered; null when none did. */
  endpoint: z.string().max(80).nullable(),
  outcome: z.enum(['ok', 'unreachable', 'timeout', 'refused', 'skipped']),
  rtt: RttSummarySchema.nullable(),
  throughput: ThroughputSampleSchema.nullable(),
  /** Whether the path went through the job overlay (F7) rather than directly. */
  path: z.enum(['direct', 'overlay']),
});
export type LinkProbeResult = z.infer<typeof LinkProbeResultSchema>;

// ---------------------------------------------------------------------------------------------------
// Control plane → edge (request/reply: accepted or declined at once, results later as reports)
// ---------------------------------------------------------------------------------------------------

export const RunBenchmarkOnEdge = defineCommand({
  type: 'edge.benchmark',
  version: 1,
  subject: 'cmd.edge.{edgeId}.benchmark.v1',
  stream: CORE_REQUEST_REPLY,
  description:
    'Measure the GPUs (or the CPU) now; answered accepted/declined at once, the profile follows as edge.benchmark-reported.',
  schema: z.strictObject({
    requestId: RequestIdSchema,
    reason: BenchmarkReasonSchema,
    suites: z.array(z.enum(BENCHMARK_SUITES)).min(1).max(BENCHMARK_SUITES.length),
    /** The run must end within this (the runner shrinks its problem sizes to fit). */
    maxDurationMs: z.int().min(1_000).max(3_600_000),
    /** How long the profile stays valid after `measuredAt`. */
    ttlMs: z.int().min(60_000),
    /** Run even while a job holds the GPUs (the provider's policy must also allow it). */
    allowWhileBusy: z.boolean(),
  }),
});

export const ProbeLinksOnEdge = defineCommand({
  type: 'edge.probe-links',
  version: 1,
  subject: 'cmd.edge.{edgeId}.probe-links.v1',
  stream: CORE_REQUEST_REPLY,
  description:
    'Measure RTT and throughput to these peers, bounded in bytes and time; results follow as edge.links-probed.',
  schema: z.strictObject({
    requestId: RequestIdSchema,
    targets: z
      .array(
        z.strictObject({
          peerId: EdgeIdSchema,
          /** Tried in order until one answers. */
          endpoints: z.array(ProbeEndpointSchema).min(1).max(8),
          /** Also measure throughput to this peer (RTT is always measured). */
          throughput: z.boolean(),
        }),
      )
      .min(1)
      .max(64),
    /** UDP echoes per peer. */
    rttSamples: z.int().min(1).max(64),
    rttTimeoutMs: z.int().min(10).max(10_000),
    /** Upper bound of one throughput transfer, bytes. */
    throughputMaxBytes: z
      .int()
      .min(1)
      .max(256 * 1024 * 1024),
    /** Upper bound of one throughput transfer, ms. */
    throughputMaxMs: z.int().min(10).max(60_000),
    allowWhileBusy: z.boolean(),
  }),
});

/** Why an edge declined a benchmark or probe request. */
export const BenchmarkDeclineSchema = z.strictObject({
  code: z.enum(['BUSY', 'ALREADY_RUNNING', 'UNSUPPORTED', 'INVALID_REQUEST']),
  message: z.string().max(512),
});

/** The immediate answer to `RunBenchmarkOnEdge` and `ProbeLinksOnEdge`. */
export const BenchmarkReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({ requestId: RequestIdSchema, outcome: z.literal('accepted') }),
  z.strictObject({
    requestId: RequestIdSchema,
    outcome: z.literal('declined'),
    reason: BenchmarkDeclineSchema,
  }),
]);
export type BenchmarkReply = z.infer<typeof BenchmarkReplySchema>;

// ---------------------------------------------------------------------------------------------------
// Edge → control plane (signed reports)
// ---------------------------------------------------------------------------------------------------

export const EdgeBenchmarkReported = defineEvent({
  type: 'edge.benchmark-reported',
  version: 1,
  subject: 'edge.{edgeId}.benchmark-reported.v1',
  stream: EdgeBenchmarkStream.name,
  description: 'An edge finished (or failed) a benchmark run it accepted. Signed.',
  schema: z.strictObject({
    ...signedEdgeReportFields,
    requestId: RequestIdSchema,
    outcome: z.enum(['completed', 'failed']),
    /** Present when completed. */
    profile: BenchmarkProfileSchema.nullable(),
    /** Why it failed (the runner's last words); null when completed. */
    error: z.string().max(2048).nullable(),
  }),
});

export const EdgeLinksProbed = defineEvent({
  type: 'edge.links-probed',
  version: 1,
  subject: 'edge.{edgeId}.links-probed.v1',
  stream: EdgeBenchmarkStream.name,
  description: 'An edge measured the links to the peers it was asked to probe. Signed.',
  schema: z.strictObject({
    ...signedEdgeReportFields,
    requestId: RequestIdSchema,
    probedAt: UtcTimestampSchema,
    results: z.array(LinkProbeResultSchema).max(64),
  }),
});

// ---------------------------------------------------------------------------------------------------
// Benchmarking's decisions
// ---------------------------------------------------------------------------------------------------

const providerId = { providerId: EdgeIdSchema };

export const BenchmarkRequested = defineEvent({
  type: 'benchmark.requested',
  version: 1,
  subject: 'benchmarking.benchmark.requested.v1',
  stream: BenchmarkingStream.name,
  description:
    'Benchmarking asked an edge to measure itself (first time, renewal, new hardware, spot check).',
  schema: z.strictObject({
    ...providerId,
    requestId: RequestIdSchema,
    reason: BenchmarkReasonSchema,
    at: UtcTimestampSchema,
    /** Without a report by then, the request counts as failed. */
    deadline: UtcTimestampSchema,
  }),
});

export const BenchmarkFailed = defineEvent({
  type: 'benchmark.failed',
  version: 1,
  subject: 'benchmarking.benchmark.failed.v1',
  stream: BenchmarkingStream.name,
  description:
    'A requested benchmark did not produce a profile: declined, failed on the edge, or no report in time.',
  schema: z.strictObject({
    ...providerId,
    requestId: RequestIdSchema,
    cause: z.enum(['declined', 'failed', 'timed-out']),
    detail: z.string().max(2048),
    at: UtcTimestampSchema,
  }),
});

export const GpuBenchmarked = defineEvent({
  type: 'gpu.benchmarked',
  version: 1,
  subject: 'benchmarking.gpu.benchmarked.v1',
  stream: BenchmarkingStream.name,
  description:
    "A provider's devices were measured; the profile is the one the scheduler reads until it expires.",
  schema: z.strictObject({
    ...providerId,
    requestId: RequestIdSchema,
    reason: BenchmarkReasonSchema,
    /** The inventory is declared, not detected; the profile is then `simulated` too. */
    simulated: z.boolean(),
    profile: BenchmarkProfileSchema,
    at: UtcTimestampSchema,
  }),
});

/** One comparison of a claim with a measurement. */
export const ClaimCheckSchema = z.strictObject({
  /** The GPU (inventory uuid) or `host` for checks about the host as a whole. */
  subject: text(128),
  /** What the inventory claims: the GPU model name, or a count. */
  claimed: text(256),
  /** The reference entry used (`H100 SXM`); null when the model is not in the table. */
  reference: z.string().max(64).nullable(),
  metric: z.enum([
    'matmul-fp32-tflops',
    'matmul-tf32-tflops',
    'matmul-fp16-tflops',
    'matmul-bf16-tflops',
    'memory-bandwidth-gbps',
    'memory-bytes',
    'device-count',
    'device-present',
  ]),
  /** The published figure (peak) or the claimed quantity. */
  published: z.number().min(0).nullable(),
  /** Lowest acceptable measurement: published × the model's tolerance floor. */
  expectedMin: z.number().min(0).nullable(),
  measured: z.number().min(0).nullable(),
  /** measured / published; null when either is missing. */
  ratio: z.number().min(0).nullable(),
  verdict: z.enum(['ok', 'below-tolerance', 'missing', 'unverifiable']),
});
export type ClaimCheck = z.infer<typeof ClaimCheckSchema>;

export const ProviderClaimVerified = defineEvent({
  type: 'provider.claim.verified',
  version: 1,
  subject: 'benchmarking.provider.claim.verified.v1',
  stream: BenchmarkingStream.name,
  description: "A provider's measured performance matches what its inventory claims, within tolerance.",
  schema: z.strictObject({
    ...providerId,
    profileId: RequestIdSchema,
    checks: z.array(ClaimCheckSchema).max(1024),
    at: UtcTimestampSchema,
  }),
});

export const ProviderClaimMismatched = defineEvent({
  type: 'provider.claim.mismatched',
  version: 1,
  subject: 'benchmarking.provider.claim.mismatched.v1',
  stream: BenchmarkingStream.name,
  description:
    "A provider's measurements fall outside the tolerance of what its inventory claims; carries the evidence.",
  schema: z.strictObject({
    ...providerId,
    profileId: RequestIdSchema,
    /** The checks that failed (and, for context, the ones that passed). */
    evidence: z.strictObject({
      failed: z.array(ClaimCheckSchema).min(1).max(1024),
      passed: z.array(ClaimCheckSchema).max(1024),
      profileKind: z.enum(['gpu', 'cpu', 'simulated']),
      measuredAt: UtcTimestampSchema,
      /** The reference table's version and source, so a reader can check the published figures. */
      referenceTable: text(128),
    }),
    reliabilityBefore: z.number().min(0).max(1),
    reliabilityAfter: z.number().min(0).max(1),
    at: UtcTimestampSchema,
  }),
});

export const ProviderReliabilityChanged = defineEvent({
  type: 'provider.reliability-changed',
  version: 1,
  subject: 'benchmarking.provider.reliability-changed.v1',
  stream: BenchmarkingStream.name,
  description: "A provider's reliability score moved (a mismatch, a failed or a verified benchmark).",
  schema: z.strictObject({
    ...providerId,
    /** 0 (never trust) … 1 (every check passed). */
    score: z.number().min(0).max(1),
    previous: z.number().min(0).max(1),
    cause: z.enum(['claim-mismatched', 'claim-verified', 'benchmark-failed']),
    at: UtcTimestampSchema,
  }),
});

export const LinkMeasured = defineEvent({
  type: 'link.measured',
  version: 1,
  subject: 'benchmarking.link.measured.v1',
  stream: BenchmarkingStream.name,
  description: 'The RTT (and throughput) from one provider host to another was measured.',
  schema: z.strictObject({
    /** The prober. */
    a: EdgeIdSchema,
    /** The peer it probed. */
    b: EdgeIdSchema,
    /** Minimum RTT over the samples (queueing removed), µs. */
    rttUs: z.number().min(0),
    /** a → b bulk throughput; null when not measured this time. */
    throughputBitsPerSecond: z.number().min(0).nullable(),
    /** Both hosts are on one LAN (same site). */
    sameSite: z.boolean(),
    path: z.enum(['direct', 'overlay']),
    measuredAt: UtcTimestampSchema,
    expiresAt: UtcTimestampSchema,
  }),
});

// ---------------------------------------------------------------------------------------------------
// Queries the scheduler reads
// ---------------------------------------------------------------------------------------------------

const pageRequest = {
  /** Only these providers; empty: all. */
  providerIds: z.array(EdgeIdSchema).max(1000).default([]),
  /** `nextCursor` of the previous page. */
  cursor: z.string().max(128).nullable().default(null),
  limit: z.int().min(1).max(1000).default(200),
};

export const ReliabilitySchema = z.strictObject({
  providerId: EdgeIdSchema,
  score: z.number().min(0).max(1),
  mismatches: z.int().min(0),
  verifiedRuns: z.int().min(0),
  failedRuns: z.int().min(0),
  lastVerifiedAt: UtcTimestampSchema.nullable(),
  lastMismatchAt: UtcTimestampSchema.nullable(),
});
export type Reliability = z.infer<typeof ReliabilitySchema>;

export const ProviderProfileSchema = z.strictObject({
  providerId: EdgeIdSchema,
  simulated: z.boolean(),
  /** The newest profile; null when the provider was never measured. */
  profile: BenchmarkProfileSchema.nullable(),
  /** `expiresAt` has passed: the figures are stale (the scheduler should fall back to declared ones). */
  expired: z.boolean(),
  reliability: ReliabilitySchema,
});
export type ProviderProfile = z.infer<typeof ProviderProfileSchema>;

export const FindGpuProfiles = defineQuery({
  name: 'benchmarking.gpu-profiles',
  version: 1,
  description: 'Measured performance profiles and reliability per provider, paged by provider id.',
  request: z.strictObject({ ...pageRequest, includeExpired: z.boolean().default(false) }),
  response: z.strictObject({ items: z.array(ProviderProfileSchema), nextCursor: z.string().nullable() }),
});

export const FindReliability = defineQuery({
  name: 'benchmarking.reliability',
  version: 1,
  description: 'Reliability scores per provider, paged by provider id.',
  request: z.strictObject(pageRequest),
  response: z.strictObject({ items: z.array(ReliabilitySchema), nextCursor: z.string().nullable() }),
});

/** A host's network coordinate (Vivaldi): RTT(a, b) ≈ ‖(x, y)ₐ − (x, y)_b‖ + heightₐ + height_b, µs. */
export const NetworkCoordinateSchema = z.strictObject({
  hostId: EdgeIdSchema,
  x: z.number(),
  y: z.number(),
  height: z.number().min(0),
  /** Relative error estimate of this coordinate, 0 … 1 (Vivaldi's local error). */
  error: z.number().min(0),
  /** Same-site group (hosts measured on one LAN share it); the lowest host id of the group. */
  siteId: EdgeIdSchema,
  updatedAt: UtcTimestampSchema,
});
export type NetworkCoordinateRecord = z.infer<typeof NetworkCoordinateSchema>;

export const MeasuredLinkSchema = z.strictObject({
  a: EdgeIdSchema,
  b: EdgeIdSchema,
  rttUs: z.number().min(0),
  throughputBitsPerSecond: z.number().min(0).nullable(),
  sameSite: z.boolean(),
  path: z.enum(['direct', 'overlay']),
  measuredAt: UtcTimestampSchema,
  expiresAt: UtcTimestampSchema,
});
export type MeasuredLink = z.infer<typeof MeasuredLinkSchema>;

export const GetNetworkEstimate = defineQuery({
  name: 'benchmarking.network',
  version: 1,
  description:
    'The network estimate: coordinates of hosts (RTT for any pair) and the measured links (unexpired), for the given hosts or all.',
  request: z.strictObject({
    hostIds: z.array(EdgeIdSchema).max(5000).default([]),
    includeExpired: z.boolean().default(false),
  }),
  response: z.strictObject({
    coordinates: z.array(NetworkCoordinateSchema),
    links: z.array(MeasuredLinkSchema),
  }),
});

// ---------------------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------------------

/** Every benchmarking message, for registries. */
export const benchmarkingCatalog = [
  RunBenchmarkOnEdge,
  ProbeLinksOnEdge,
  EdgeBenchmarkReported,
  EdgeLinksProbed,
  BenchmarkRequested,
  BenchmarkFailed,
  GpuBenchmarked,
  ProviderClaimVerified,
  ProviderClaimMismatched,
  ProviderReliabilityChanged,
  LinkMeasured,
] as const satisfies readonly MessageDefinition[];
