import { Headers } from '@gpunet/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { Client } from 'pg';
import { type BackoffPolicy, backoffDelay } from '../backoff';
import type { EventingMetrics } from '../metrics';
import type { Database } from '../postgres/database';
import { type LocalRelay, registerLocalRelay } from '../postgres/event-store';
import {
  Attr,
  AttrValue,
  contextFromTraceRecord,
  inSpan,
  injectIntoHeaders,
  SpanKind,
  type TraceRecord,
} from '../tracing';

export interface OutboxRelayOptions {
  readonly db: Database;
  readonly js: JetStreamClient;
  /** NOTIFY channel of the event store (`PostgresEventStore.channel`). */
  readonly channel: string;
  /** Rows read and published per round. Default 256. */
  readonly batchSize?: number;
  /**
   * Safety-net poll in ms, for a notification lost while the LISTEN connection was down. Commits
   * wake the relay at once through NOTIFY; this only bounds the worst case. Default 1000.
   */
  readonly pollIntervalMs?: number;
  /**
   * How long published rows may wait for their DELETE, in ms, so that one DELETE takes the rows of
   * many rounds: at a steady trickle each round publishes a row or two, and a DELETE per round was a
   * statement per round besides the read (bench/eventing at 1,000 events/s: 1,752 DELETEs for 6,000
   * events; gathered, 188). A round's worth (`batchSize`) is deleted at once. Default 50.
   */
  readonly deleteDelayMs?: number;
  /** How long to wait for JetStream's acknowledgement of one publish, in ms. Default 5000. */
  readonly publishTimeoutMs?: number;
  /** Backoff between failed rounds (NATS down, stream missing). */
  readonly backoff?: BackoffPolicy;
  readonly metrics?: EventingMetrics;
  /** Called on failures worth a log line; the relay itself never throws them. */
  readonly onError?: (error: unknown, context: string) => void;
  /**
   * Called after JetStream acknowledged a batch and before its rows are deleted: the window in which
   * a crash makes the relay publish again. Crash tests use it to die exactly there.
   */
  readonly afterPublish?: (published: number) => void | Promise<void>;
}

interface OutboxRow {
  id: string;
  event_id: string;
  subject: string;
  /** Set for messages enqueued directly (commands); null for events, whose columns follow. */
  body: string | null;
  type: string;
  version: number;
  trace: TraceRecord | null;
  stream_id: string | null;
  stream_version: number | null;
  data: unknown;
  correlation_id: string | null;
  causation_id: string | null;
  occurred_at: Date | null;
}

/**
 * The relay's read: the first `$1` outbox rows in id order, leaving out the ids in `$2` (published,
 * DELETE pending), each event's row with its event. The event is looked up per outbox row through
 * `events_event_id_key` (a LATERAL subquery with LIMIT 1, which Postgres does not flatten into a
 * join): as a plain join, the planner hashed the whole `events` table whenever its statistics made
 * the outbox look long and `events` short, a sequential scan of every event at every read (~17 ms
 * at 5,000 events; `relay-read-plan.int.spec.ts`). A custom plan is made for the first five reads on
 * each pooled connection, and the pool opens new connections, so that was not a one-off.
 */
export const outboxReadSql = (schema: string): string =>
  `SELECT o.id, o.event_id, o.subject, o.body, o.type, o.version, o.trace,
          e.stream_id, e.stream_version, e.data, e.correlation_id, e.causation_id, e.occurred_at
   FROM "${schema}".outbox o
   LEFT JOIN LATERAL (
     SELECT ev.stream_id, ev.stream_version, ev.data, ev.correlation_id, ev.causation_id, ev.occurred_at
     FROM "${schema}".events ev WHERE o.body IS NULL AND ev.event_id = o.event_id LIMIT 1) e ON true
   WHERE o.id <> ALL($2::bigint[])
   ORDER BY o.id LIMIT $1`;

/** The wire body: the stored envelope, rebuilt from the event row when the outbox row has none. */
const bodyOf = (row: OutboxRow): string =>
  row.body ??
  JSON.stringify({
    eventId: row.event_id,
    type: row.type,
    version: row.version,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    occurredAt: row.occurred_at?.toISOString(),
    correlationId: row.correlation_id,
    causationId: row.causation_id,
    data: row.data,
  });

/**
 * Publishes the outbox to JetStream (ADR 0001). One relay per schema is active at a time (a Postgres
 * advisory lock held on its LISTEN connection; standbys take over when that connection dies). Each
 * message goes out with `Nats-Msg-Id = eventId`, so a row published again after a crash is dropped
 * by the broker's de-duplication, and consumers de-duplicate by event id beyond its window. A row is
 * deleted only after JetStream acknowledged it: a crash at any point loses nothing.
 */
export class OutboxRelay implements LocalRelay {
  private listener: Client | undefined;
  private leader = false;
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private pending = true;
  private failures = 0;
  /**
   * Rows JetStream acknowledged whose DELETE has not committed yet. Deleting is off the publishing
   * path (the next round does not wait for that commit); these ids are left out of the next reads
   * meanwhile, so nothing is published twice by this relay. A standby that takes over re-publishes
   * them (de-duplicated by Nats-Msg-Id and by the consumers' inbox).
   */
  private readonly acknowledged = new Set<string>();
  private deleting: Promise<void> | undefined;
  private deleteTimer: NodeJS.Timeout | undefined;
  private unregister: (() => void) | undefined;

  constructor(private readonly options: OutboxRelayOptions) {}

  get isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // Commits in this process wake the relay in memory (OutboxNotifier); NOTIFY covers the others.
    this.unregister = registerLocalRelay(this.options.channel, this);
    this.loop = this.run();
  }

  /** A commit in this process put rows in the outbox (`OutboxNotifier`): publish them now. */
  onCommitted(): void {
    this.pending = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.unregister?.();
    this.unregister = undefined;
    this.running = false;
    this.wake?.();
    await this.loop;
    clearTimeout(this.deleteTimer);
    this.deleteTimer = undefined;
    await this.flushDeletes().catch((error: unknown) =>
      this.options.onError?.(
        error,
        'outbox relay could not delete published rows at stop; a relay re-sends them',
      ),
    );
    await this.disconnect();
  }

  /** Publishes everything in the outbox now; resolves when it is empty (used by tools and tests). */
  async drain(): Promise<void> {
    while ((await this.publishBatch()).published > 0) {
      /* keep going */
    }
    await this.flushDeletes();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (!(await this.ensureLeadership())) {
          await this.idle(this.options.pollIntervalMs ?? 1000);
          continue;
        }
        this.pending = false;
        const { full } = await this.publishBatch();
        this.failures = 0;
        // Read again at once only if the batch was full or a commit came since this read began
        // (`pending`: NOTIFY, or this process's commit): every row committed before it was in it.
        // Reading again after every round that found rows had made a third of the relay's reads
        // empty ones (bench/eventing).
        if (!full && !this.pending) await this.idle(this.options.pollIntervalMs ?? 1000);
      } catch (error) {
        this.failures += 1;
        this.options.metrics?.relayFailures.inc();
        this.options.onError?.(error, 'outbox relay round failed; retrying with backoff');
        await this.idle(backoffDelay(this.failures, this.options.backoff ?? { initialMs: 50, maxMs: 5000 }));
      }
    }
  }

  /**
   * Reads one batch, publishes it, and hands what JetStream acknowledged to the deleter. Returns
   * the rows published, and whether the read was a full batch (more may be waiting).
   */
  private async publishBatch(): Promise<{ published: number; full: boolean }> {
    const { db } = this.options;
    const batchSize = this.options.batchSize ?? 256;
    // Backpressure: at most a few rounds' rows wait for their DELETE (Postgres slower than NATS);
    // and a DELETE that failed is tried again (`scheduleDelete`).
    if (this.acknowledged.size >= 4 * batchSize) await this.flushDeletes();
    else this.scheduleDelete(batchSize);
    // Straight on the pool, as a prepared statement (parsed and planned once per connection): the
    // relay reads after every commit. A pool serves one schema, so one name fits every connection.
    const rows = await db.read<OutboxRow>(
      outboxReadSql(db.schema),
      [batchSize, [...this.acknowledged]],
      'gpunet_outbox_relay_read',
    );
    this.options.metrics?.outboxLag.set(rows.length);
    if (rows.length === 0) return { published: 0, full: false };
    // Publishes are pipelined; JetStream stores them in send order. Only the acknowledged prefix is
    // deleted, so a failure mid-batch re-sends the rest (de-duplicated by Nats-Msg-Id). The next
    // round does not wait for the DELETE's commit.
    const results = await Promise.allSettled(rows.map((row) => this.publish(row)));
    const firstFailure = results.findIndex((r) => r.status === 'rejected');
    const done = firstFailure === -1 ? rows.length : firstFailure;
    if (done > 0) await this.options.afterPublish?.(done);
    if (done > 0) {
      for (const row of rows.slice(0, done)) this.acknowledged.add(row.id);
      this.options.metrics?.published.inc(done);
      this.scheduleDelete(batchSize);
    }
    if (firstFailure !== -1) throw (results[firstFailure] as PromiseRejectedResult).reason;
    return { published: done, full: rows.length === batchSize };
  }

  /**
   * Deletes the acknowledged rows now when a round's worth has gathered, else after `deleteDelayMs`
   * (the rows of the rounds meanwhile go with them).
   */
  private scheduleDelete(batchSize: number): void {
    if (this.acknowledged.size === 0) return;
    if (this.acknowledged.size >= batchSize) {
      void this.deleteInBackground();
      return;
    }
    this.deleteTimer ??= setTimeout(() => {
      this.deleteTimer = undefined;
      void this.deleteInBackground();
    }, this.options.deleteDelayMs ?? 50).unref();
  }

  /**
   * Deletes acknowledged rows in the background, one DELETE at a time for all that gathered
   * meanwhile. A failed DELETE leaves its ids in `acknowledged`: the next round or flush retries.
   */
  private deleteInBackground(): Promise<void> {
    if (!this.deleting) {
      const run = this.deleteAcknowledged().finally(() => {
        this.deleting = undefined;
      });
      run.catch((error: unknown) => {
        this.options.metrics?.relayFailures.inc();
        this.options.onError?.(error, 'outbox relay could not delete published rows; retrying');
      });
      this.deleting = run;
    }
    return this.deleting;
  }

  /**
   * Runs on the relay's own connection (the LISTEN one, which holds the leadership lock), where
   * `synchronous_commit` is off: a DELETE commits without waiting for its WAL flush (~0.8 ms on our
   * VMs) and never queues the appends' and consumers' commits behind that flush. What a server crash
   * can undo is a DELETE only: those rows are published again, and dropped as duplicates by
   * JetStream (`Nats-Msg-Id`) or by the consumers' inbox, as after a relay crash.
   */
  private async deleteAcknowledged(): Promise<void> {
    const { db } = this.options;
    while (this.acknowledged.size > 0) {
      const ids = [...this.acknowledged];
      const sql = `DELETE FROM "${db.schema}".outbox WHERE id = ANY($1::bigint[])`;
      // Without that connection (`drain` outside `start`, or just lost): a pooled one.
      if (this.listener) await this.listener.query(sql, [ids]);
      else await db.query(sql, [ids]);
      for (const id of ids) this.acknowledged.delete(id);
    }
  }

  /** Resolves once every acknowledged row is deleted; rejects if a DELETE fails. */
  private async flushDeletes(): Promise<void> {
    while (this.acknowledged.size > 0) await this.deleteInBackground();
  }

  private publish(row: OutboxRow): Promise<unknown> {
    return inSpan(
      `publish ${row.type}`,
      {
        kind: SpanKind.PRODUCER,
        parent: contextFromTraceRecord(row.trace),
        attributes: {
          [Attr.messagingSystem]: AttrValue.messagingSystemNats,
          [Attr.messagingOperationType]: AttrValue.operationType.send,
          [Attr.messagingDestination]: row.subject,
          [Attr.messagingMessageId]: row.event_id,
          [Attr.eventId]: row.event_id,
          [Attr.eventType]: row.type,
          [Attr.eventVersion]: row.version,
        },
      },
      async () => {
        const hdrs = natsHeaders();
        hdrs.set(Headers.msgId, row.event_id);
        hdrs.set(Headers.type, row.type);
        hdrs.set(Headers.version, String(row.version));
        injectIntoHeaders(hdrs);
        return this.options.js.publish(row.subject, bodyOf(row), {
          msgID: row.event_id,
          headers: hdrs,
          timeout: this.options.publishTimeoutMs ?? 5000,
        });
      },
    );
  }

  /** Holds the LISTEN connection and, on it, the relay's advisory lock. */
  private async ensureLeadership(): Promise<boolean> {
    if (this.listener && this.leader) return true;
    if (!this.listener) {
      const client = new Client({
        connectionString: this.options.db.options.url,
        application_name: 'gpunet-outbox-relay',
      });
      client.on('notification', () => this.onCommitted());
      client.on('error', (error) => {
        this.options.onError?.(error, 'outbox relay lost its LISTEN connection');
        void this.disconnect();
      });
      await client.connect();
      // For the deletes of published rows (`deleteAcknowledged`), which may be undone by a crash.
      await client.query('SET synchronous_commit = off');
      await client.query(`LISTEN "${this.options.channel}"`);
      this.listener = client;
    }
    const { rows } = await this.listener.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
      [this.options.channel],
    );
    this.leader = rows[0]?.locked === true;
    return this.leader;
  }

  private async disconnect(): Promise<void> {
    const client = this.listener;
    this.listener = undefined;
    this.leader = false;
    // No longer the leader: the one that takes over publishes (and deletes) what is left.
    this.acknowledged.clear();
    this.wake?.();
    await client?.end().catch(() => undefined);
  }

  private idle(ms: number): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}
