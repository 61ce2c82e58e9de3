import { z } from 'zod';
import { defineEvent } from '../../message';
import { EdgeIdSchema } from '../primitives';
import { BenchmarkingStream } from '../streams';
import { challengeRecordFields } from './challenge.schemas';

export const ProviderChallenged = defineEvent({
  type: 'provider.challenged',
  version: 1,
  subject: 'benchmarking.provider.challenged.v1',
  stream: BenchmarkingStream.name,
  description: 'A GPU challenge ended: passed, or failed with the evidence (a wrong or late answer).',
  schema: z.strictObject({ providerId: EdgeIdSchema, ...challengeRecordFields }),
});
