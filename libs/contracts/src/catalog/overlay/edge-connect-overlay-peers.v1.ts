import { z } from 'zod';
import { defineCommand } from '../../message';
import { EntityIdSchema } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';
import { OverlayPeerSchema } from './endpoint.schemas';
import { EdgePathReportSchema } from './path-report.schemas';

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
