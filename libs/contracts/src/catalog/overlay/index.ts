/*
 * The job overlay (ADR 0020): one WireGuard network per job. The control plane (execution) asks
 * every edge of a job to attach (the edge generates its key pair and answers with its public key
 * and candidate endpoints), signs an admission token for each key, then hands every edge its peers
 * and token (it connects to the relay, probes the peers, chooses direct or relayed per peer and
 * answers with its path report), and publishes the job's path report.
 * Private keys never leave an edge; the relay sees only ciphertext.
 */

// Values
export {
  type NatMapping,
  NatMappingSchema,
  type OverlayCandidate,
  OverlayCandidateSchema,
  type OverlayEndpoint,
  OverlayEndpointSchema,
  type OverlayPeer,
  OverlayPeerSchema,
  type OverlayRelay,
  OverlayRelaySchema,
} from './endpoint.schemas';
export { Ipv4AddressSchema, Ipv4CidrSchema, UdpEndpointSchema, WireGuardKeySchema } from './network.schemas';
export {
  type EdgePathReport,
  EdgePathReportSchema,
  type JobPathReport,
  JobPathReportSchema,
  type PairPath,
  PairPathSchema,
  type PathKind,
  PathKindSchema,
  type PeerPath,
  PeerPathSchema,
} from './path-report.schemas';

// Control plane → edge (request/reply)
export { AttachOverlay, type OverlayAttachReply, OverlayAttachReplySchema } from './edge-attach-overlay.v1';
export {
  ConnectOverlayPeers,
  type OverlayConnectReply,
  OverlayConnectReplySchema,
} from './edge-connect-overlay-peers.v1';
export { DetachOverlay } from './edge-detach-overlay.v1';

// The job's report
export { JobOverlayPathsQuery } from './overlay-job-paths.v1';
export { OverlayPathsReported } from './overlay-paths-reported.v1';

export { overlayMessages } from './overlay.messages';
