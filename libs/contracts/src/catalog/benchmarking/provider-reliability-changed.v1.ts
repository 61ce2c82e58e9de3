import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';

export const ProviderReliabilityChanged = defineEvent({
  type: 'provider.reliability-changed',
  version: 1,
  subject: 'benchmarking.provider.reliability-changed.v1',
  stream: BenchmarkingStream.name,
  description:
    "A provider's reliability score moved (a mismatch, a failed or a verified benchmark, a challenge passed or failed).",
  schema: z.strictObject({
    providerId: EdgeIdSchema,
    /** 0 (never trust) … 1 (every check passed). */
    score: z.number().min(0).max(1),
    previous: z.number().min(0).max(1),
    cause: z.enum([
      'claim-mismatched',
      'claim-verified',
      'benchmark-failed',
      'challenge-passed',
      'challenge-failed',
    ]),
    at: UtcTimestampSchema,
  }),
});
