import { z } from 'zod';
import { EntityIdSchema, TimestampSchema } from '../primitives';
import { NatMappingSchema } from './endpoint.schemas';
import { Ipv4AddressSchema, UdpEndpointSchema, WireGuardKeySchema } from './network.schemas';

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
  lastHandshakeAt: TimestampSchema.nullable(),
});
export type PeerPath = z.infer<typeof PeerPathSchema>;

/** One edge's report about its paths in one job. */
export const EdgePathReportSchema = z.strictObject({
  jobId: EntityIdSchema,
  publicKey: WireGuardKeySchema,
  address: Ipv4AddressSchema,
  natMapping: NatMappingSchema,
  measuredAt: TimestampSchema,
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
  generatedAt: TimestampSchema,
  pairs: z.array(PairPathSchema),
  direct: z.int().min(0),
  relayed: z.int().min(0),
  /** Pairs that are unreachable, mixed or unknown. */
  other: z.int().min(0),
});
export type JobPathReport = z.infer<typeof JobPathReportSchema>;
