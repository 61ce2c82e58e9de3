import { z } from 'zod';
import { EdgeIdSchema, EntityIdSchema } from '../primitives';
import { Ipv4AddressSchema, UdpEndpointSchema, WireGuardKeySchema } from './network.schemas';

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
