import type { Tx } from './database';

/**
 * Advisory-lock class of stream locks. The two-key form of `pg_advisory_xact_lock` lives in another
 * key space than the one-key form the outbox relay uses, so they never collide.
 */
const STREAM_LOCK_CLASS = 0x5e771e;

/**
 * Serializes the writers of `streamId` until `tx` ends: a second transaction that locks the same
 * stream waits for the first to commit, then reads what it wrote — no conflict to retry.
 *
 * Advisory locks belong to the whole database, so the key is the stream's schema and id: two
 * services (or two test suites) with a stream of the same id in schemas of their own never wait
 * for each other, and never deadlock by taking each other's locks in different orders.
 */
export const lockStream = async (tx: Tx, streamId: string): Promise<void> => {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
    STREAM_LOCK_CLASS,
    `${tx.schema}/${streamId}`,
  ]);
};

/** `lockStream` for several streams, in id order, so that writers of overlapping sets never deadlock. */
export const lockStreams = async (tx: Tx, streamIds: readonly string[]): Promise<void> => {
  for (const streamId of [...new Set(streamIds)].sort()) await lockStream(tx, streamId);
};
