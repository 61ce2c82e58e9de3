import { z } from 'zod';
import { EdgeIdSchema, text } from '../primitives';

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
  /** Whether the path went through the job overlay rather than directly. */
  path: z.enum(['direct', 'overlay']),
});
export type LinkProbeResult = z.infer<typeof LinkProbeResultSchema>;
