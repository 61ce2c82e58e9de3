import {
  type Envelope,
  type MessageDefinition,
  type MessageRegistry,
  namespacedStream,
  type StreamDefinition,
} from '@gpunet/contracts';
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Database, Tx } from './postgres/database';
import { type PostgresEventStore, PRIVATE_EVENT_VERSION } from './postgres/event-store';

/**
 * A read model kept in Postgres. `apply` must be deterministic in the events it is given: rebuilding
 * by replay then gives the same tables.
 */
export interface Projection {
  /** Also the consumer name whose inbox and checkpoint the projection owns. */
  readonly name: string;
  /** Empties the projection's tables (inside the rebuild's transaction). */
  reset(tx: Tx): Promise<void>;
  apply(envelope: Envelope, tx: Tx): Promise<void>;
}

export interface RebuildReport {
  readonly applied: number;
  readonly skipped: number;
}

/** Progress callback for long rebuilds: how far, out of how many (when known). */
export type RebuildProgress = (done: number, total: number | undefined) => void;

const clearOwnState = async (tx: Tx, projection: Projection): Promise<void> => {
  await projection.reset(tx);
  await tx.query(`DELETE FROM "${tx.schema}".inbox WHERE consumer = $1`, [projection.name]);
  await tx.query(`DELETE FROM "${tx.schema}".checkpoints WHERE consumer = $1`, [projection.name]);
};

const markApplied = async (
  tx: Tx,
  projection: Projection,
  eventIds: string[],
  sequence: number | undefined,
): Promise<void> => {
  await tx.query(
    `INSERT INTO "${tx.schema}".inbox (consumer, event_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING`,
    [projection.name, eventIds],
  );
  if (sequence !== undefined) {
    await tx.query(
      `INSERT INTO "${tx.schema}".checkpoints (consumer, stream_sequence) VALUES ($1, $2)
       ON CONFLICT (consumer) DO UPDATE SET stream_sequence = EXCLUDED.stream_sequence, updated_at = now()`,
      [projection.name, sequence],
    );
  }
};

/**
 * Rebuilds a projection from the service's own event store, in global order. The projection's live
 * consumer must be stopped meanwhile. The reset and the replay run in one transaction, so readers
 * see the old tables until the new ones are complete.
 */
export const rebuildFromEventStore = async (
  db: Database,
  store: PostgresEventStore,
  projection: Projection,
  options: { pageSize?: number; onProgress?: RebuildProgress } = {},
): Promise<RebuildReport> =>
  db.transaction(async (tx) => {
    await clearOwnState(tx, projection);
    let applied = 0;
    for (let after = 0; ;) {
      const page = await store.readAll({ afterPosition: after, limit: options.pageSize ?? 1000 });
      if (page.length === 0) break;
      // A service's private events never left it: no projection of published events sees them.
      for (const event of page)
        if (event.version !== PRIVATE_EVENT_VERSION) await projection.apply(event, tx);
      await markApplied(
        tx,
        projection,
        page.map((e) => e.eventId),
        undefined,
      );
      applied += page.length;
      after = page[page.length - 1]!.globalPosition;
      options.onProgress?.(applied, undefined);
    }
    return { applied, skipped: 0 };
  });

/**
 * Rebuilds a projection by replaying its JetStream stream from the first message up to the last one
 * present when the rebuild starts. Inbox rows are rewritten, so when the durable consumer resumes,
 * what the replay already applied is skipped as duplicate. Messages that do not decode (those were
 * dead-lettered when they first arrived) are skipped and counted.
 */
export const rebuildFromStream = async (options: {
  readonly db: Database;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly registry: MessageRegistry;
  readonly stream: StreamDefinition;
  readonly messages: readonly MessageDefinition[];
  readonly projection: Projection;
  readonly prefix?: string;
  readonly batchSize?: number;
  readonly onProgress?: RebuildProgress;
}): Promise<RebuildReport> => {
  const prefix = options.prefix ?? '';
  const streamName = namespacedStream(options.stream, prefix).name;
  const info = await options.jsm.streams.info(streamName);
  const last = info.state.last_seq;
  return options.db.transaction(async (tx) => {
    await clearOwnState(tx, options.projection);
    if (info.state.messages === 0) return { applied: 0, skipped: 0 };
    const filters = options.messages.map((m) => m.filter(prefix));
    const wanted = new Set(options.messages.map((m) => m.type));
    // NATS < 2.10 filters an ordered consumer on one subject only; with several, filter here by type.
    const consumer = await options.js.consumers.get(streamName, {
      ...(filters.length === 1
        ? { filter_subjects: filters[0]! }
        : supportsMultiFilter(options.nc)
          ? { filter_subjects: filters }
          : {}),
      deliver_policy: DeliverPolicy.All,
    });
    let applied = 0;
    let skipped = 0;
    let seen = 0;
    const ids: string[] = [];
    try {
      const iterator = await consumer.consume({ max_messages: options.batchSize ?? 512 });
      for await (const msg of iterator) {
        seen = msg.info.streamSequence;
        let envelope: Envelope | undefined;
        try {
          envelope = options.registry.parse(msg.json());
        } catch {
          skipped += 1;
        }
        if (envelope && wanted.has(envelope.type)) {
          await options.projection.apply(envelope, tx);
          ids.push(envelope.eventId);
          applied += 1;
        }
        if (ids.length >= 1000) await markApplied(tx, options.projection, ids.splice(0), undefined);
        options.onProgress?.(seen, last);
        // Delivered nothing past `last` — or messages the filter skipped, shown by `pending` = 0.
        if (seen >= last || msg.info.pending === 0) break;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    await markApplied(tx, options.projection, ids, seen);
    return { applied, skipped };
  });
};

const supportsMultiFilter = (nc: NatsConnection): boolean => {
  const [major = 0, minor = 0] = (nc.info?.version ?? '0.0').split('.').map(Number);
  return major > 2 || (major === 2 && minor >= 10);
};
