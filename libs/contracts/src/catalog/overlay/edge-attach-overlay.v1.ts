import { z } from 'zod';
import { defineCommand } from '../../message';
import { EntityIdSchema } from '../primitives';
import { CORE_REQUEST_REPLY } from '../streams';
import { OverlayEndpointSchema, OverlayRelaySchema } from './endpoint.schemas';
import { Ipv4AddressSchema, Ipv4CidrSchema } from './network.schemas';

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
