import type { Envelope, MessageRegistry } from '@gpunet/contracts';
import { ConcurrencyError, type ExpectedVersion } from '../errors';
import { currentTraceRecord, type TraceRecord } from '../tracing';
import type { Database, Tx } from './database';

/** An event to append: an envelope without its stream position, which the store assigns. */
export interface NewEvent {
  readonly eventId: string;
  readonly type: string;
  readonly version: number;
  readonly data: unknown;
  readonly occurredAt: string;
  readonly correlationId: string;
  readonly causationId: string | null;
  /** Values for the `{tokens}` of the definition's subject template, if it has any. */
  readonly subjectParams?: Readonly<Record<string, string>>;
}

/** An event as stored: its envelope plus its position in the global order. */
export interface StoredEvent extends Envelope {
  readonly globalPosition: number;
}

export interface AppendResult {
  /** The stream's version after the append. */
  readonly nextExpectedVersion: number;
  readonly events: readonly StoredEvent[];
}

interface EventRow {
  global_position: string;
  stream_id: string;
  stream_version: number;
  event_id: string;
  type: string;
  version: number;
  data: unknown;
  correlation_id: string;
  causation_id: string | null;
  occurred_at: Date;
}

const PG_UNIQUE_VIOLATION = '23505';

/**
 * The service's event store in Postgres (ADR 0001). Appends check the expected version and write
 * the events and their outbox rows in one transaction; the primary key `(stream_id, stream_version)`
 * makes two concurrent appends at the same version impossible: exactly one commits.
 */
export class PostgresEventStore {
  constructor(
    private readonly db: Database,
    private readonly registry: MessageRegistry,
    /** NATS namespace prefix for outbox subjects (tests: unique per suite; production: empty). */
    private readonly subjectPrefix = '',
  ) {}

  /** The NOTIFY channel the outbox relay listens on. */
  get channel(): string {
    return `${this.db.schema}_outbox`;
  }

  /**
   * Appends `events` to `streamId` if the stream is at `expectedVersion`. Each payload is validated
   * against the registry first: nothing invalid is ever stored. Pass `tx` to append inside a wider
   * transaction (a consumer's, say); otherwise the append is its own transaction.
   */
  async append(
    streamId: string,
    events: readonly NewEvent[],
    options: { expectedVersion: ExpectedVersion; tx?: Tx },
  ): Promise<AppendResult> {
    if (options.tx) return this.appendIn(options.tx, streamId, events, options.expectedVersion);
    return this.db.transaction((tx) => this.appendIn(tx, streamId, events, options.expectedVersion));
  }

  private async appendIn(
    tx: Tx,
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedVersion,
  ): Promise<AppendResult> {
    const current = await this.currentVersion(streamId, tx);
    const mustBe = expected === 'no_stream' ? 0 : expected;
    if (mustBe !== 'any' && current !== mustBe) throw new ConcurrencyError(streamId, expected, current);
    if (events.length === 0) return { nextExpectedVersion: current, events: [] };

    const trace = currentTraceRecord();
    const envelopes = events.map((e, i): Envelope => {
      const def = this.registry.get(e.type, e.version);
      return {
        eventId: e.eventId,
        type: e.type,
        version: e.version,
        streamId,
        streamVersion: current + i + 1,
        occurredAt: e.occurredAt,
        correlationId: e.correlationId,
        causationId: e.causationId,
        data: this.registry.validate(def, e.data),
      };
    });

    const s = tx.schema;
    let rows: { global_position: string }[];
    try {
      rows = await tx.query<{ global_position: string }>(
        `INSERT INTO "${s}".events
           (stream_id, stream_version, event_id, type, version, data, correlation_id, causation_id, trace, occurred_at)
         SELECT * FROM unnest($1::text[], $2::int[], $3::uuid[], $4::text[], $5::int[], $6::jsonb[],
                              $7::text[], $8::text[], $9::jsonb[], $10::timestamptz[])
         RETURNING global_position`,
        columns(envelopes, trace),
      );
    } catch (error) {
      if (
        (error as { code?: string }).code === PG_UNIQUE_VIOLATION ||
        (error as { driverError?: { code?: string } }).driverError?.code === PG_UNIQUE_VIOLATION
      ) {
        throw new ConcurrencyError(streamId, expected, current);
      }
      throw error;
    }
    await enqueueOutbox(
      tx,
      envelopes.map((env, i) => ({
        envelope: env,
        subject: this.registry
          .get(env.type, env.version)
          .subject(events[i]!.subjectParams as never, this.subjectPrefix),
      })),
      this.channel,
      trace,
    );
    return {
      nextExpectedVersion: current + events.length,
      events: envelopes.map((env, i) => ({ ...env, globalPosition: Number(rows[i]!.global_position) })),
    };
  }

  /** The stream's version: the number of its events (0 when it does not exist). */
  async currentVersion(streamId: string, tx?: Tx): Promise<number> {
    const sql = `SELECT coalesce(max(stream_version), 0) AS v FROM "${this.db.schema}".events WHERE stream_id = $1`;
    const rows = tx
      ? await tx.query<{ v: number }>(sql, [streamId])
      : await this.db.query<{ v: number }>(sql, [streamId]);
    return Number(rows[0]?.v ?? 0);
  }

  /** The events of one stream in order, validated and upcast to the newest versions. */
  async readStream(
    streamId: string,
    options: { fromVersion?: number; tx?: Tx } = {},
  ): Promise<StoredEvent[]> {
    const sql = `SELECT * FROM "${this.db.schema}".events WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version`;
    const params = [streamId, options.fromVersion ?? 1];
    const rows = options.tx
      ? await options.tx.query<EventRow>(sql, params)
      : await this.db.query<EventRow>(sql, params);
    return rows.map((r) => this.toStored(r));
  }

  /**
   * Events of every stream in global order, after `afterPosition`. Positions are assigned at insert,
   * so a transaction still open can commit a lower position later: use this for replays of a quiet
   * store (projection rebuilds), and JetStream for live delivery.
   */
  async readAll(options: { afterPosition?: number; limit?: number } = {}): Promise<StoredEvent[]> {
    const rows = await this.db.query<EventRow>(
      `SELECT * FROM "${this.db.schema}".events WHERE global_position > $1 ORDER BY global_position LIMIT $2`,
      [options.afterPosition ?? 0, options.limit ?? 1000],
    );
    return rows.map((r) => this.toStored(r));
  }

  private toStored(r: EventRow): StoredEvent {
    const envelope = this.registry.parse({
      eventId: r.event_id,
      type: r.type,
      version: r.version,
      streamId: r.stream_id,
      streamVersion: r.stream_version,
      occurredAt: r.occurred_at.toISOString(),
      correlationId: r.correlation_id,
      causationId: r.causation_id,
      data: r.data,
    });
    return { ...envelope, globalPosition: Number(r.global_position) };
  }
}

const columns = (envelopes: readonly Envelope[], trace: TraceRecord | null): unknown[] => [
  envelopes.map((e) => e.streamId),
  envelopes.map((e) => e.streamVersion),
  envelopes.map((e) => e.eventId),
  envelopes.map((e) => e.type),
  envelopes.map((e) => e.version),
  envelopes.map((e) => JSON.stringify(e.data)),
  envelopes.map((e) => e.correlationId),
  envelopes.map((e) => e.causationId),
  envelopes.map(() => (trace ? JSON.stringify(trace) : null)),
  envelopes.map((e) => e.occurredAt),
];

/** A message for the outbox: a validated envelope and the subject it goes out on. */
export interface OutboxMessage {
  readonly envelope: Envelope;
  readonly subject: string;
}

/**
 * Writes messages to the outbox inside `tx` and wakes the relay at commit (NOTIFY is delivered only
 * when the transaction commits, and never if it rolls back). Events are enqueued by `append`;
 * handlers call this directly for commands they send as a consequence of what they handled.
 */
export const enqueueOutbox = async (
  tx: Tx,
  messages: readonly OutboxMessage[],
  channel: string,
  trace: TraceRecord | null = currentTraceRecord(),
): Promise<void> => {
  if (messages.length === 0) return;
  await tx.query(
    `INSERT INTO "${tx.schema}".outbox (event_id, subject, body, type, version, trace)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[], $6::jsonb[])`,
    [
      messages.map((m) => m.envelope.eventId),
      messages.map((m) => m.subject),
      messages.map((m) => JSON.stringify(m.envelope)),
      messages.map((m) => m.envelope.type),
      messages.map((m) => m.envelope.version),
      messages.map(() => (trace ? JSON.stringify(trace) : null)),
    ],
  );
  await tx.query(`SELECT pg_notify($1, '')`, [channel]);
};
