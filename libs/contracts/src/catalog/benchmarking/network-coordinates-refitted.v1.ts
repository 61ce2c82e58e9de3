import { z } from 'zod';
import { defineEvent } from '../../message';
import { UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { NetworkCoordinateSchema } from './benchmarking-network.v1';

/**
 * One host's coordinate after a refit and the same-site group detection put it in: the network
 * estimate's record without its `updatedAt` (the event's `fittedAt` says when).
 */
export const RefittedCoordinateSchema = NetworkCoordinateSchema.omit({ updatedAt: true });
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
