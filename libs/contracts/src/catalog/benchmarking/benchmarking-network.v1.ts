import { z } from 'zod';
import { defineQuery } from '../../query';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';

/** A host's network coordinate (Vivaldi): RTT(a, b) ≈ ‖(x, y)ₐ − (x, y)_b‖ + heightₐ + height_b, µs. */
export const NetworkCoordinateSchema = z.strictObject({
  hostId: EdgeIdSchema,
  x: z.number(),
  y: z.number(),
  height: z.number().min(0),
  /** Relative error estimate of this coordinate, 0 … 1 (Vivaldi's local error). */
  error: z.number().min(0),
  /** Same-site group (hosts measured on one LAN share it); the lowest host id of the group. */
  siteId: EdgeIdSchema,
  updatedAt: UtcTimestampSchema,
});
export type NetworkCoordinateRecord = z.infer<typeof NetworkCoordinateSchema>;

export const MeasuredLinkSchema = z.strictObject({
  a: EdgeIdSchema,
  b: EdgeIdSchema,
  rttUs: z.number().min(0),
  throughputBitsPerSecond: z.number().min(0).nullable(),
  sameSite: z.boolean(),
  path: z.enum(['direct', 'overlay']),
  measuredAt: UtcTimestampSchema,
  expiresAt: UtcTimestampSchema,
});
export type MeasuredLink = z.infer<typeof MeasuredLinkSchema>;

export const GetNetworkEstimate = defineQuery({
  name: 'benchmarking.network',
  version: 1,
  description:
    'The network estimate: coordinates of hosts (RTT for any pair) and the measured links (unexpired), for the given hosts or all.',
  request: z.strictObject({
    hostIds: z.array(EdgeIdSchema).max(5000).default([]),
    includeExpired: z.boolean().default(false),
  }),
  response: z.strictObject({
    coordinates: z.array(NetworkCoordinateSchema),
    links: z.array(MeasuredLinkSchema),
  }),
});
