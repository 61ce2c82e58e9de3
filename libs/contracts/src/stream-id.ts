import { z } from 'zod';

/**
 * The kinds of aggregate stream gpunet's services keep. A stream id is `<kind>-<id>[-<id>…]`:
 * `job-<jobId>`, `subnet-<subnetId>`, `deposit-<asset>-<depositId>`. The services' stores are
 * separate, so the same id in two services names two streams (settlement's `job-…` and the
 * scheduler's), each of the aggregate that service keeps of the job.
 */
export const StreamKindSchema = z.enum([
  'job',
  'provider',
  'subnet',
  'withdrawal',
  'deposit',
  'reconciliation',
  'overlay',
  'edge',
  'rank',
  'benchmarking',
  'benchmarking-provider',
  'benchmarking-links',
  'liveness',
  'dlq',
]);
export type StreamKind = z.infer<typeof StreamKindSchema>;

/** The id of the `kind` stream of `ids` (joined with `-`): the one way stream ids are written. */
export const streamIdOf = (kind: StreamKind, ...ids: readonly [string, ...string[]]): string => {
  for (const id of ids) if (id.length === 0) throw new Error(`streamIdOf(${kind}): an id part is empty`);
  return `${kind}-${ids.join('-')}`;
};
