import type { MessageDefinition } from '../../message';
import { BenchmarkFailed } from './benchmark-failed.v1';
import { BenchmarkRequested } from './benchmark-requested.v1';
import { EdgeBenchmarkReported } from './edge-benchmark-reported.v1';
import { RunBenchmarkOnEdge } from './edge-benchmark.v1';
import { OpenChallengeOnEdge, RunChallengeOnEdge } from './edge-challenge.v1';
import { EdgeLinksProbed } from './edge-links-probed.v1';
import { ProbeLinksOnEdge } from './edge-probe-links.v1';
import { GpuBenchmarked } from './gpu-benchmarked.v1';
import { GpuVerificationChanged } from './gpu-verification-changed.v1';
import { LinkMeasured } from './link-measured.v1';
import { NetworkCoordinatesRefitted } from './network-coordinates-refitted.v1';
import { ProviderChallenged } from './provider-challenged.v1';
import { ProviderClaimMismatched } from './provider-claim-mismatched.v1';
import { ProviderClaimVerified } from './provider-claim-verified.v1';
import { ProviderReliabilityChanged } from './provider-reliability-changed.v1';

/** Every benchmarking message, for registries. */
export const benchmarkingCatalog = [
  RunBenchmarkOnEdge,
  ProbeLinksOnEdge,
  RunChallengeOnEdge,
  OpenChallengeOnEdge,
  EdgeBenchmarkReported,
  EdgeLinksProbed,
  BenchmarkRequested,
  BenchmarkFailed,
  GpuBenchmarked,
  ProviderClaimVerified,
  ProviderClaimMismatched,
  ProviderReliabilityChanged,
  ProviderChallenged,
  GpuVerificationChanged,
  LinkMeasured,
  NetworkCoordinatesRefitted,
] as const satisfies readonly MessageDefinition[];
