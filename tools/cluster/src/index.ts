export {
  DEV_SETTLEMENT_ENV,
  DevCluster,
  type DevClusterOptions,
  depositOnSimulatedChain,
  publishAs,
  requestSubnet,
  requestSubnetJoin,
  type SubnetParameters,
} from './dev-cluster';
export {
  FAKE_H100_NVIDIA_SMI_DIR,
  type LyingH100EdgeOptions,
  runtimeArgs,
  type SimulatedEdge,
  type SimulatedEdgeOptions,
  startLyingH100Edge,
  startSimulatedEdge,
} from './edge-process';
export { NamespaceBridge } from './namespace-bridge';
export { rankProcessId } from './rank-process';
export {
  CONTROL_PLANE_SERVICES,
  type ControlPlaneService,
  ServiceProcess,
  type ServiceProcessOptions,
  ServiceStartError,
} from './service-process';
export { type DevEconomy, devSubnetParameters, openDevEconomy } from './economy';
export {
  awaitMeasurements,
  CLUSTER_BENCHMARKING_ENV,
  CLUSTER_PROBE_PORTS,
  type GpuProfileEvent,
  type LinkMeasurement,
  MeasurementTimeoutError,
  type Measurements,
} from './measurements';
export {
  type Accepted,
  awaitParametersVersion,
  awaitProposalDecided,
  awaitProposalOpened,
  awaitSlashProposed,
  awaitSlashTaken,
  awaitStanding,
  awaitSubnet,
  awaitSubnetView,
  awaitVoteCast,
  type ExpectedSlash,
  expectedSlash,
  GatewayApi,
  GatewayRequestError,
  type JobStatement,
  type LedgerTotals,
  ledgerTotals,
  type ParametersChange,
  proposeAndVote,
  reconciliationMismatches,
  type SubnetView,
  type VoteChoice,
} from './governance';
