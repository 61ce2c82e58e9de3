import { z } from 'zod';
import { text, UtcTimestampSchema } from '../primitives';
import { ByteCountSchema } from './providers.schemas';

/** A GPU reservation an edge accepted (the scheduler drives them; the edge keeps them until released or expired). */
export const EdgeReservationSchema = z.strictObject({
  reservationId: text(128),
  jobId: text(128),
  gpuUuids: z.array(z.string().min(1).max(128)).min(1).max(64),
  cpuMillicores: z.int().min(0),
  memoryBytes: ByteCountSchema,
  expiresAt: UtcTimestampSchema,
});
export type EdgeReservation = z.infer<typeof EdgeReservationSchema>;
