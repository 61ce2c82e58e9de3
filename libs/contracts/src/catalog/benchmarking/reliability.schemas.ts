import { z } from 'zod';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';

export const ReliabilitySchema = z.strictObject({
  providerId: EdgeIdSchema,
  score: z.number().min(0).max(1),
  mismatches: z.int().min(0),
  verifiedRuns: z.int().min(0),
  failedRuns: z.int().min(0),
  lastVerifiedAt: UtcTimestampSchema.nullable(),
  lastMismatchAt: UtcTimestampSchema.nullable(),
});
export type Reliability = z.infer<typeof ReliabilitySchema>;
