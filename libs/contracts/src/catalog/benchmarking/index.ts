/*
 * Benchmarking. The control plane never believes a GPU's name: it asks each edge to measure its
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

// Values
export {
  BENCHMARK_PROFILE_VERSION,
  type BenchmarkDevice,
  BenchmarkDeviceSchema,
  type BenchmarkProfile,
  BenchmarkProfileSchema,
  MATMUL_PRECISIONS,
  type MatmulPrecision,
  type MatmulTflops,
  MatmulTflopsSchema,
  type PeerBandwidth,
  PeerBandwidthSchema,
} from './benchmark-profile.schemas';
export {
  BENCHMARK_SUITES,
  type BenchmarkReason,
  BenchmarkReasonSchema,
  type BenchmarkSuite,
} from './benchmarking.schemas';
export {
  type LinkProbeResult,
  LinkProbeResultSchema,
  type ProbeEndpoint,
  ProbeEndpointSchema,
  type RttSummary,
  RttSummarySchema,
  type ThroughputSample,
  ThroughputSampleSchema,
} from './link-probe.schemas';

// Control plane → edge (request/reply: accepted or declined at once, results later as reports)
export { BenchmarkDeclineSchema, type BenchmarkReply, BenchmarkReplySchema } from './benchmark-reply.schemas';
export { RunBenchmarkOnEdge } from './edge-benchmark.v1';
export { ProbeLinksOnEdge } from './edge-probe-links.v1';

// Edge → control plane (signed reports)
export { EdgeBenchmarkReported } from './edge-benchmark-reported.v1';
export { EdgeLinksProbed } from './edge-links-probed.v1';

// GPU challenges (ADR 0070)
export {
  CHALLENGE_DTYPES,
  type ChallengeDtype,
  ChallengeDtypeSchema,
  type ChallengeEvidence,
  ChallengeEvidenceSchema,
  type ChallengeFailureKind,
  ChallengeFailureKindSchema,
  type ChallengeReason,
  ChallengeReasonSchema,
  type GpuVerificationStatus,
  GpuVerificationStatusSchema,
  Hex32Schema,
} from './challenge.schemas';
export {
  type ChallengeCommitReply,
  ChallengeCommitReplySchema,
  ChallengeDeclineCodeSchema,
  type ChallengeOpenReply,
  ChallengeOpenReplySchema,
  OpenChallengeOnEdge,
  RunChallengeOnEdge,
} from './edge-challenge.v1';
export { GpuVerificationChanged } from './gpu-verification-changed.v1';
export { ProviderChallenged } from './provider-challenged.v1';
export { GetProviderTrust, type ProviderTrust, ProviderTrustSchema } from './benchmarking-provider-trust.v1';
export {
  FindGpuVerification,
  type ProviderGpuVerification,
  ProviderGpuVerificationSchema,
} from './benchmarking-gpu-verification.v1';

// Benchmarking's decisions
export { BenchmarkFailed } from './benchmark-failed.v1';
export { BenchmarkRequested } from './benchmark-requested.v1';
export { type ClaimCheck, ClaimCheckSchema } from './claim-check.schemas';
export { GpuBenchmarked } from './gpu-benchmarked.v1';
export { LinkMeasured } from './link-measured.v1';
export {
  NetworkCoordinatesRefitted,
  type RefittedCoordinate,
  RefittedCoordinateSchema,
} from './network-coordinates-refitted.v1';
export { ProviderClaimMismatched } from './provider-claim-mismatched.v1';
export { ProviderClaimVerified } from './provider-claim-verified.v1';
export { ProviderReliabilityChanged } from './provider-reliability-changed.v1';

// Queries the scheduler reads
export { FindGpuProfiles, type ProviderProfile, ProviderProfileSchema } from './benchmarking-gpu-profiles.v1';
export {
  GetNetworkEstimate,
  type MeasuredLink,
  MeasuredLinkSchema,
  type NetworkCoordinateRecord,
  NetworkCoordinateSchema,
} from './benchmarking-network.v1';
export { FindReliability } from './benchmarking-reliability.v1';
export { type Reliability, ReliabilitySchema } from './reliability.schemas';

export { benchmarkingCatalog } from './benchmarking.messages';
