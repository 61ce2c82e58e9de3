import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';

/** One host's coordinate after a refit, and the same-site group detection put it in. */
export const RefittedCoordinateSchema = z.strictObject({
  hostId: EdgeIdSchema,
  /** Vivaldi coordinate: estimated RTT(a, b) = ‖(x, y)ₐ − (x, y)_b‖ + heightₐ + height_b, µs. */
  x: z.number(),
  y: z.number(),
  height: z.number().min(0),
  /** Relative error estimate of this coordinate, 0 … 1 (Vivaldi's local error; 1 = nothing learnt yet). */
  error: z.number().min(0),
  /** Same-site group: hosts measured on one LAN share it (the lowest host id of the group). */
  siteId: EdgeIdSchema,
});
export type RefittedCoordinate = z.infer<typeof RefittedCoordinateSchema>;

export const NetworkCoordinatesRefitted = defineEvent({
  type: 'network.coordinates.refitted',
  version: 1,
  subject: 'benchmarking.network.coordinates-refitted.v1',
  stream: BenchmarkingStream.name,
  description:
    "Benchmarking refitted the hosts' network coordinates from the live links: the hosts whose coordinate moved, whose error changed or whose same-site group changed.",
  schema: z.strictObject({
    /** Only the hosts that changed since the previous fit (a first fit lists every host). */
    hosts: z.array(RefittedCoordinateSchema).min(1).max(5000),
    fittedAt: UtcTimestampSchema,
    /**
     * When the fit stops being worth more than a guess: the fit used only links live at `fittedAt`,
     * which expire by then (the link TTL). A consumer treats the coordinates as unknown afterwards.
     */
    expiresAt: UtcTimestampSchema,
  }),
});
