import { z } from 'zod';
import { defineCommand } from '../../message';
import { EdgeIdSchema } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';
import { ProbeEndpointSchema } from './link-probe.schemas';

export const ProbeLinksOnEdge = defineCommand({
  type: 'edge.probe-links',
  version: 1,
  subject: 'cmd.edge.{edgeId}.probe-links.v1',
  stream: CORE_REQUEST_REPLY,
  description:
    'Measure RTT and throughput to these peers, bounded in bytes and time; results follow as edge.links-probed.',
  schema: z.strictObject({
    requestId: RequestIdSchema,
    targets: z
      .array(
        z.strictObject({
          peerId: EdgeIdSchema,
          /** Tried in order until one answers. */
          endpoints: z.array(ProbeEndpointSchema).min(1).max(8),
          /** Also measure throughput to this peer (RTT is always measured). */
          throughput: z.boolean(),
        }),
      )
      .min(1)
      .max(64),
    /** UDP echoes per peer. */
    rttSamples: z.int().min(1).max(64),
    rttTimeoutMs: z.int().min(10).max(10_000),
    /** Upper bound of one throughput transfer, bytes. */
    throughputMaxBytes: z
      .int()
      .min(1)
      .max(256 * 1024 * 1024),
    /** Upper bound of one throughput transfer, ms. */
    throughputMaxMs: z.int().min(10).max(60_000),
    allowWhileBusy: z.boolean(),
  }),
});
