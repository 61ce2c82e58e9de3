import type { Tx } from './database';

/** An aggregate's state after `version` events of its stream, the stream's correlation and last event. */
export interface Snapshot {
  readonly state: unknown;
  readonly version: number;
  readonly correlationId: string;
  /** The id of event `version`: what a decision on this state is caused by unless told otherwise. */
  readonly lastEventId: string;
}

interface SnapshotRow {
  readonly state: unknown;
  readonly version: number;
  readonly correlation_id: string;
  readonly last_event_id: string;
}

/** Anything that runs a query in the service's schema: a transaction, or the database itself. */
type Queryable = Pick<Tx, 'query' | 'schema'>;

/**
 * Snapshots of one aggregate type's state in the `snapshots` table (migration 0006), in `format`:
 * a snapshot written in another format is not read (the state's shape changed; the stream is
 * folded again and the next write replaces it).
 */
export class SnapshotStore {
  constructor(readonly format: number) {
    if (!Number.isInteger(format)) throw new Error(`snapshot format must be an integer, not ${format}`);
  }

  async read(db: Queryable, streamId: string): Promise<Snapshot | undefined> {
    const rows = await db.query<SnapshotRow>(
      `SELECT state, version, correlation_id, last_event_id FROM "${db.schema}".snapshots
        WHERE stream_id = $1 AND format = $2`,
      [streamId, this.format],
      'gpunet_snapshot_read',
    );
    const row = rows[0];
    return row
      ? {
          state: row.state,
          version: row.version,
          correlationId: row.correlation_id,
          lastEventId: row.last_event_id,
        }
      : undefined;
  }

  write(tx: Tx, streamId: string, snapshot: Snapshot): Promise<void> {
    // Sent without waiting: the commit fails if it does.
    tx.write(
      `INSERT INTO "${tx.schema}".snapshots (stream_id, version, format, state, correlation_id, last_event_id)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (stream_id) DO UPDATE SET version = EXCLUDED.version, format = EXCLUDED.format,
         state = EXCLUDED.state, correlation_id = EXCLUDED.correlation_id,
         last_event_id = EXCLUDED.last_event_id, updated_at = now()`,
      [
        streamId,
        snapshot.version,
        this.format,
        JSON.stringify(snapshot.state),
        snapshot.correlationId,
        snapshot.lastEventId,
      ],
      'gpunet_snapshot_write',
    );
    return Promise.resolve();
  }
}
