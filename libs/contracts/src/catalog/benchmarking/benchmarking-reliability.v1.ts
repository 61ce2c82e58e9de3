import { z } from 'zod';
import { defineQuery } from '../../query';
import { providerPageRequest } from './benchmarking.schemas';
import { ReliabilitySchema } from './reliability.schemas';

export const FindReliability = defineQuery({
  name: 'benchmarking.reliability',
  version: 1,
  description: 'Reliability scores per provider, paged by provider id.',
  request: z.strictObject(providerPageRequest),
  response: z.strictObject({ items: z.array(ReliabilitySchema), nextCursor: z.string().nullable() }),
});
