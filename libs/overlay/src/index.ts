export {
  allocateJobNetwork,
  assignHostAddresses,
  contains,
  DEFAULT_JOB_PREFIX_LENGTH,
  DEFAULT_OVERLAY_POOL,
  formatCidr,
  formatIpv4,
  hostAddress,
  InvalidAddressError,
  type Ipv4Network,
  OverlayPoolExhaustedError,
  overlaps,
  parseCidr,
  parseIpv4,
} from './domain/addressing';
export { buildJobPathReport } from './domain/path-report';
export { choosePath, classifyNat, type ConfirmedCandidate, type PathChoice } from './domain/path-selection';
export { rankNetworkEnv, type RankNetworkEnvOptions } from './domain/rank-env';
export { rankRelays, type RelayAddress } from './domain/relay-choice';
export { TokenBucket } from './domain/token-bucket';
export { CommandError, runCommand } from './run-command';
export {
  discoKey,
  generateKeyPair,
  interfaceName,
  InvalidKeyError,
  keyBytes,
  keyFromHex,
  type KeyPair,
  keyToHex,
  publicKeyOf,
  sharedSecret,
} from './keys';
export { configureRankInterface, inNetns, ipIn, moveLink, type NetnsRef } from './netns/netns';
export { type DiscoMessage, discoSender, isDisco, openDisco, sealDisco } from './protocol/disco';
export {
  type ClientHello,
  encodeFrame,
  encodeJsonFrame,
  encodePacketFrame,
  type Frame,
  FRAME_HEADER_BYTES,
  FrameDecoder,
  FrameTooLargeError,
  FrameType,
  type FrameTypeValue,
  KEY_BYTES,
  MAX_FRAME_BODY_BYTES,
  MAX_PACKET_BYTES,
  packetKey,
  packetPayload,
  PROTOCOL_VERSION,
  type RelayErrorBody,
  type ServerHello,
} from './protocol/frames';
export {
  decodeStun,
  encodeBindingRequest,
  encodeBindingSuccess,
  isStun,
  type StunMessage,
} from './protocol/stun';
export {
  RelayClient,
  type RelayClientOptions,
  type RelayClientStats,
  RelayConnectError,
  RelayRejectedError,
} from './relay/relay-client';
export { type PacketSink, RelayShims } from './relay/relay-shims';
export {
  kernelWireGuardAvailable,
  parseWgDump,
  startKernelWireGuard,
  startUserspaceWireGuard,
  type UserspaceOptions,
  type WireGuardDevice,
  WireGuardStartError,
  wgConfText,
} from './wireguard/device';
export {
  type DeviceConfig,
  type DeviceState,
  parseGetResponse,
  type PeerConfig,
  type PeerState,
  setRequestLines,
  UapiError,
  uapiGet,
  uapiSet,
} from './wireguard/uapi';
export {
  type BulkOptions,
  PathProber,
  type ProbeOptions,
  type ProbePeer,
  type ProbeResult,
} from './edge/path-prober';
export { StunClient } from './edge/stun-client';
export {
  attachOverlay,
  type AttachOverlayOptions,
  type ConnectPeersOptions,
  hostIpv4Addresses,
  JobOverlay,
  type OverlayLog,
} from './edge/job-overlay';
export {
  type AdmissionClaims,
  AdmissionError,
  type AdmissionRejection,
  generateAdmissionKeys,
  issueAdmissionToken,
  verifyAdmissionToken,
} from './admission';
export { AgentCallError, OverlayAgentClient, type AgentTransport } from './agent/agent-client';
export type { AgentAttachResult, AgentMethods, AgentStatus } from './agent/agent-protocol';
/** Path of the overlay agent's entry point (run it with tsx inside a host's namespace). */
export const OVERLAY_AGENT_MAIN = 'libs/overlay/src/agent/main.ts';
export {
  failed as failedOverlayReply,
  type OverlayCommandKind,
  type OverlayDetachReply,
  OverlayDetachReplySchema,
  type OverlayReplyOf,
  type Unanswered,
} from './command-plane/replies';
export {
  type AttachOverlayCommand,
  type ConnectOverlayPeersCommand,
  type DetachOverlayCommand,
  type EdgeAttachSettings,
  EdgeOverlayAgent,
  type EdgeOverlayAgentOptions,
  type RankNamespaceProvider,
  rankNetnsName,
} from './edge/edge-overlay-agent';
export {
  type AttachedOverlay,
  type EdgeOverlayRuntime,
  findExecutable,
  hostOverlayRuntime,
  type HostOverlayRuntimeOptions,
} from './edge/overlay-runtime';
export {
  type EdgeOverlayTransport,
  natsEdgeOverlayTransport,
  type NatsEdgeOverlayTransportOptions,
} from './control/edge-overlay-transport';
export {
  type EdgeOverlayFailure,
  InvalidOverlayRequestError,
  JobOverlayCoordinator,
  type JobOverlayCoordinatorOptions,
  OVERLAY_INTERFACE,
  type OverlayHostRef,
  OverlayPrepareError,
  type OverlayRelayInput,
  type OverlayStage,
  type PreparedOverlay,
  type PrepareOverlayRequest,
  type TeardownResult,
} from './control/job-overlay-coordinator';
/** Path of the edge overlay agent's runner (NATS + `EdgeOverlayAgent`; the namespace tests run one per host). */
export const EDGE_OVERLAY_AGENT_MAIN = 'libs/overlay/src/agent/edge-agent-main.ts';
