import { z } from 'zod';
import { defineCommand, defineEvent } from '../message';
import { defineQuery } from '../query';
import { EdgeIdSchema, EntityIdSchema } from './primitives';
import { CORE_REQUEST_REPLY, ExecutionStream } from './streams';

/*
 * The job overlay (F7, ADR 0020): one WireGuard network per job. The control plane (execution)
 * asks every edge of a job to attach (the edge generates its key pair and answers with its public
 * key and candidate endpoints), signs an admission token for each key, then hands every edge its
 * peers and token (it connects to the relay, probes the peers, chooses direct or relayed per peer
 * and answers with its path report), and publishes the job's path report.
 * Private keys never leave an edge; the relay sees only ciphertext.
 */

// ---------------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------------

/** A WireGuard (X25519) public key: 32 bytes, standard base64 with padding (44 characters). */
export const WireGuardKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/, 'must be a WireGuard key: 32 bytes in base64 (44 chars)');

const octet = '(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const ipv4 = `${octet}\\.${octet}\\.${octet}\\.${octet}`;
const port = '([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';

/** An IPv4 address: `100.96.3.1`. */
export const Ipv4AddressSchema = z.string().regex(new RegExp(`^${ipv4}$`), 'must be an IPv4 address');
/** An IPv4 network: `100.96.3.0/24`. */
export const Ipv4CidrSchema = z
  .string()
  .regex(new RegExp(`^${ipv4}/([0-9]|[12][0-9]|3[0-2])$`), 'must be an IPv4 network like 100.96.3.0/24');
/** A UDP endpoint: `203.0.113.7:51820`. */
export const UdpEndpointSchema = z
  .string()
  .regex(new RegExp(`^${ipv4}:${port}$`), 'must be an IPv4 endpoint like 203.0.113.7:51820');

/**
 * Where a peer may be reached directly: `host` — an address of the edge's own interfaces (peers on
 * the same LAN); `reflexive` — the edge's public mapping as a STUN server saw it (peers elsewhere,
 * if its NAT maps endpoint-independently).
 */
export const OverlayCandidateSchema = z.strictObject({
  kind: z.enum(['host', 'reflexive']),
  endpoint: UdpEndpointSchema,
});
export type OverlayCandidate = z.infer<typeof OverlayCandidateSchema>;

/**
 * How the edge's NAT maps its UDP port, from STUN answers of two relay ports: `none` (no NAT: the
 * mapped address is the edge's own), `endpoint-independent` (one public port for every destination
 * — punching works), `endpoint-dependent` (a new port per destination, a "symmetric" NAT — relayed),
 * `unknown` (no STUN answer).
 */
export const NatMappingSchema = z.enum(['none', 'endpoint-independent', 'endpoint-dependent', 'unknown']);
export type NatMapping = z.infer<typeof NatMappingSchema>;

/** A relay edges may use. */
export const OverlayRelaySchema = z.strictObject({
  relayId: EntityIdSchema,
  /** Address or DNS name edges connect to. */
  host: z.string().min(1).max(253),
  /** TCP port of the framed relay protocol. */
  port: z.int().min(1).max(65_535),
  /** UDP ports answering STUN Binding requests (two, to detect symmetric NATs). */
  stunPorts: z.array(z.int().min(1).max(65_535)).max(4),
  /** Connect with TLS. */
  tls: z.boolean().default(false),
  /** TLS server name, when it differs from `host`. */
  servername: z.string().min(1).max(253).optional(),
});
export type OverlayRelay = z.infer<typeof OverlayRelaySchema>;

/** What an edge tells the control plane about its end of a job's overlay. */
export const OverlayEndpointSchema = z.strictObject({
  jobId: EntityIdSchema,
  publicKey: WireGuardKeySchema,
  /** The host's overlay address in the job network. */
  address: Ipv4AddressSchema,
  candidates: z.array(OverlayCandidateSchema).max(16),
  natMapping: NatMappingSchema,
  /** The relay whose STUN ports answered (and that the edge will connect to); null when none did. */
  relayId: EntityIdSchema.nullable(),
});
export type OverlayEndpoint = z.infer<typeof OverlayEndpointSchema>;

/** One member of the job, as the control plane hands it to every other member. */
export const OverlayPeerSchema = z.strictObject({
  /** The peer's edge, when the control plane knows it (for reports). */
  edgeId: EdgeIdSchema.nullable().default(null),
  publicKey: WireGuardKeySchema,
  address: Ipv4AddressSchema,
  candidates: z.array(OverlayCandidateSchema).max(16),
});
export type OverlayPeer = z.input<typeof OverlayPeerSchema>;

/** `direct`: WireGuard to the peer's own endpoint; `relayed`: through the job's relay; `unreachable`: neither answered. */
export const PathKindSchema = z.enum(['direct', 'relayed', 'unreachable']);
export type PathKind = z.infer<typeof PathKindSchema>;

/** One edge's path to one peer. */
export const PeerPathSchema = z.strictObject({
  peerPublicKey: WireGuardKeySchema,
  peerAddress: Ipv4AddressSchema,
  path: PathKindSchema,
  /** The peer's endpoint that answered (direct); null otherwise. */
  endpoint: UdpEndpointSchema.nullable(),
  /** The relay carrying the path (relayed); null otherwise. */
  relayId: EntityIdSchema.nullable(),
  /** Round trip of an authenticated probe over the path, in ms. */
  rttMs: z.number().min(0).nullable(),
  /** Receive rate the peer measured for a bounded burst of probes sent over the path, bits/s. */
  throughputBps: z.int().min(0).nullable(),
  /** WireGuard's counters for the peer since the overlay was attached. */
  txBytes: z.int().min(0),
  rxBytes: z.int().min(0),
  lastHandshakeAt: z.iso.datetime({ offset: true }).nullable(),
});
export type PeerPath = z.infer<typeof PeerPathSchema>;

/** One edge's report about its paths in one job. */
export const EdgePathReportSchema = z.strictObject({
  jobId: EntityIdSchema,
  publicKey: WireGuardKeySchema,
  address: Ipv4AddressSchema,
  natMapping: NatMappingSchema,
  measuredAt: z.iso.datetime({ offset: true }),
  peers: z.array(PeerPathSchema).max(4096),
});
export type EdgePathReport = z.infer<typeof EdgePathReportSchema>;

/** The path between two hosts of a job, from both ends' reports. */
export const PairPathSchema = z.strictObject({
  /** Overlay addresses, `a` < `b` in address order. */
  a: Ipv4AddressSchema,
  b: Ipv4AddressSchema,
  /** `mixed`: the two ends disagree (one sends direct, the other relayed); `unknown`: a report is missing. */
  path: z.enum(['direct', 'relayed', 'mixed', 'unreachable', 'unknown']),
  /** The smaller of the two ends' RTTs, ms. */
  rttMs: z.number().min(0).nullable(),
  aToBBps: z.int().min(0).nullable(),
  bToABps: z.int().min(0).nullable(),
});
export type PairPath = z.infer<typeof PairPathSchema>;

/** The per-job path report the orchestrator sees. */
export const JobPathReportSchema = z.strictObject({
  jobId: EntityIdSchema,
  generatedAt: z.iso.datetime({ offset: true }),
  pairs: z.array(PairPathSchema),
  direct: z.int().min(0),
  relayed: z.int().min(0),
  /** Pairs that are unreachable, mixed or unknown. */
  other: z.int().min(0),
});
export type JobPathReport = z.infer<typeof JobPathReportSchema>;

// ---------------------------------------------------------------------------------------------------
// Control plane → edge (request/reply)
// ---------------------------------------------------------------------------------------------------

/**
 * Create the job's WireGuard interface in the rank's namespace (the edge generates the key pair) and
 * learn candidate endpoints; answered with `OverlayAttachReply`.
 */
export const AttachOverlay = defineCommand({
  type: 'edge.attach-overlay',
  version: 1,
  subject: 'cmd.edge.{edgeId}.attach-overlay.v1',
  stream: CORE_REQUEST_REPLY,
  description:
    "Attach the host to a job's overlay: generate a key pair, create the interface, learn candidates.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    networkCidr: Ipv4CidrSchema,
    address: Ipv4AddressSchema,
    /** Relays in the order to try (`rankRelays`); empty: direct paths only. */
    relays: z.array(OverlayRelaySchema).max(16),
    mtu: z.int().min(1280).max(65_000).default(1420),
  }),
});

export const OverlayAttachReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({ outcome: z.literal('attached'), endpoint: OverlayEndpointSchema }),
  z.strictObject({ outcome: z.literal('failed'), reason: z.string().max(1024) }),
]);
export type OverlayAttachReply = z.infer<typeof OverlayAttachReplySchema>;

/** The job's members for this edge to connect to; answered with `OverlayConnectReply`. */
export const ConnectOverlayPeers = defineCommand({
  type: 'edge.connect-overlay-peers',
  version: 1,
  subject: 'cmd.edge.{edgeId}.connect-overlay-peers.v1',
  stream: CORE_REQUEST_REPLY,
  description: "Connect to the job's other members: probe direct paths, fall back to the relay, report.",
  schema: z.strictObject({
    jobId: EntityIdSchema,
    peers: z.array(OverlayPeerSchema).max(4096),
    /**
     * Signed by the control plane for the key the edge reported: lets it into the job on the relays.
     * Null: no relay (direct paths only).
     */
    admissionToken: z.string().min(1).max(4096).nullable(),
  }),
});

export const OverlayConnectReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({ outcome: z.literal('connected'), report: EdgePathReportSchema }),
  z.strictObject({ outcome: z.literal('failed'), reason: z.string().max(1024) }),
]);
export type OverlayConnectReply = z.infer<typeof OverlayConnectReplySchema>;

export const DetachOverlay = defineCommand({
  type: 'edge.detach-overlay',
  version: 1,
  subject: 'cmd.edge.{edgeId}.detach-overlay.v1',
  stream: CORE_REQUEST_REPLY,
  description: "Remove the job's interface and relay connection from the host (idempotent).",
  schema: z.strictObject({ jobId: EntityIdSchema }),
});

// ---------------------------------------------------------------------------------------------------
// The job's report
// ---------------------------------------------------------------------------------------------------

/** Execution folded the edges' reports into the job's path report (direct or relayed, per pair). */
export const OverlayPathsReported = defineEvent({
  type: 'overlay.paths-reported',
  version: 1,
  subject: 'execution.overlay.paths-reported.v1',
  stream: ExecutionStream.name,
  description: "The job's overlay paths per pair of hosts: direct or relayed, RTT and measured throughput.",
  schema: JobPathReportSchema,
});

/** The latest path report of a job. */
export const JobOverlayPathsQuery = defineQuery({
  name: 'overlay.job-paths',
  version: 1,
  request: z.strictObject({ jobId: EntityIdSchema }),
  response: JobPathReportSchema.nullable(),
  description: "The job's latest overlay path report, or null before its overlay is connected.",
});

export const overlayMessages = [
  AttachOverlay,
  ConnectOverlayPeers,
  DetachOverlay,
  OverlayPathsReported,
] as const;
