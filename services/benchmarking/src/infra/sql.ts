import type { Tx } from '@gpunet/eventing';

/** What a repository reads and writes through: a transaction, or the database outside one. */
export type Sql = Pick<Tx, 'query' | 'execute' | 'schema'>;
