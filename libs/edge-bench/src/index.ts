// The edge side of gpunet's benchmarking: the torch runner, simulated profiles, link probes and
// the agent that answers benchmarking's commands. See README.md and docs/benchmarking.md.
export {
  type BenchmarkRequest,
  EdgeBenchmarkAgent,
  type EdgeBenchmarkAgentOptions,
  probeTargets,
  type ProbeRequest,
  type Reporter,
  type ReportFields,
  signedReporter,
  type SignedReporterOptions,
} from './app/edge-benchmark-agent';
export {
  findReference,
  GPU_REFERENCE,
  type GpuReference,
  REFERENCE_TABLE_VERSION,
  TYPICAL_EFFICIENCY,
} from './domain/gpu-reference';
export {
  type DeclaredPerformance,
  SIMULATED_NOTE,
  simulatedProfile,
  type SimulatedGpu,
  type SimulatedProfileInput,
} from './domain/simulated-profile';
export {
  measureRtt,
  measureThroughput,
  type ProbeBounds,
  probeLink,
  type ProbeTarget,
  ThroughputProbeError,
} from './infra/link-prober';
export {
  hrtimeUs,
  type ProbeResponder,
  type ProbeResponderOptions,
  startProbeResponder,
} from './infra/probe-responder';
export {
  BenchmarkRunnerError,
  type BenchmarkRunnerErrorCode,
  DEFAULT_PYTHON,
  GPU_BENCH_SCRIPT,
  isBenchmarkRunnerError,
  runTorchBenchmark,
  type TorchBenchmarkOptions,
  torchBenchmarkArgs,
} from './infra/torch-runner';
export {
  type ChallengeCommitment,
  type ChallengePolicy,
  type ChallengeVerdict,
  challengeEntry,
  challengeProduct,
  commitChallenge,
  commitProduct,
  DEFAULT_CHALLENGE_POLICY,
  EMPTY_LEAF,
  FREIVALDS_BOUND,
  freivaldsEntry,
  freivaldsVector,
  leafHash,
  merkleProof,
  newOpening,
  type OpenedChallenge,
  openCommitment,
  productTree,
  sizeChallenge,
  verifyMerkleProof,
  verifyOpening,
} from './domain/challenge';
export {
  type ChallengeAgentEvent,
  type ChallengeOpenRequest,
  type ChallengeRequest,
  EdgeChallengeAgent,
  type EdgeChallengeAgentOptions,
} from './app/edge-challenge-agent';
export {
  CHALLENGE_WORKER_SCRIPT,
  type ChallengeDevice,
  type ChallengeWorker,
  ChallengeWorkerError,
  type ChallengeWorkerErrorCode,
  type ChallengeWorkerFailure,
  type ChallengeWorkerFailureCode,
  type ChallengeWorkerOptions,
  isChallengeWorkerError,
  PythonChallengeWorker,
  spawnChallengeWorker,
  type WorkerCommitAnswer,
  type WorkerCommitRequest,
  type WorkerOpenAnswer,
  type WorkerOpenRequest,
} from './infra/challenge-worker';
