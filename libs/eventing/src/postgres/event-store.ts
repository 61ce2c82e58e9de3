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
  ) {
    this.notifier = new OutboxNotifier(db, `${db.schema}_outbox`);
  }

  /** Wakes the outbox relay after commits; see `OutboxNotifier`. */
  readonly notifier: OutboxNotifier;

  /** The NOTIFY channel the outbox relay listens on. */
  get channel(): string {
    return this.notifier.channel;
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
    const mustBe = expected === 'no_stream' ? 0 : expected === 'any' ? null : expected;
    if (events.length === 0) {
      const current = await this.currentVersion(streamId, tx);
      if (mustBe !== null && current !== mustBe) throw new ConcurrencyError(streamId, expected, current);
      return { nextExpectedVersion: current, events: [] };
    }
    // Validate before touching the database: nothing invalid is ever stored.
    const validated = events.map((e) => {
      const def = this.registry.get(e.type, e.version);
      return {
        event: e,
        data: this.registry.validate(def, e.data),
        subject: def.subject(e.subjectParams as never, this.subjectPrefix),
      };
    });
    const trace = currentTraceRecord();
    let result: { current_version: number; inserted: { p: string; v: number }[] } | undefined;
    try {
      [result] = await tx.query<{ current_version: number; inserted: { p: string; v: number }[] }>(
        appendSql(tx.schema),
        [
          streamId,
          mustBe,
          validated.map((v) => v.event.eventId),
          validated.map((v) => v.event.type),
          validated.map((v) => v.event.version),
          validated.map((v) => JSON.stringify(v.data)),
          validated.map((v) => v.event.correlationId),
          validated.map((v) => v.event.causationId),
          trace ? JSON.stringify(trace) : null,
          validated.map((v) => v.event.occurredAt),
          validated.map((v) => v.subject),
        ],
      );
    } catch (error) {
      if (pgCode(error) === PG_UNIQUE_VIOLATION) {
        // Someone appended between our read of the version and our insert.
        throw new ConcurrencyError(streamId, expected, await this.currentVersion(streamId));
      }
      throw error;
    }
    const current = Number(result?.current_version ?? 0);
    const inserted = result?.inserted ?? [];
    if (inserted.length !== events.length) throw new ConcurrencyError(streamId, expected, current);
    tx.onCommit(() => this.notifier.kick());
    return {
      nextExpectedVersion: current + events.length,
      events: validated.map(({ event, data }, i) => ({
        eventId: event.eventId,
        type: event.type,
        version: event.version,
        streamId,
        streamVersion: inserted[i]!.v,
        occurredAt: event.occurredAt,
        correlationId: event.correlationId,
        causationId: event.causationId,
        data,
        globalPosition: Number(inserted[i]!.p),
      })),
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

const pgCode = (error: unknown): string | undefined =>
  (error as { code?: string }).code ?? (error as { driverError?: { code?: string } }).driverError?.code;

/**
 * One statement appends, so an append outside a wider transaction is a single round trip: read the
 * stream's version, insert the events only if it is the expected one ($2; NULL = any), write their
 * outbox rows. The outbox row of an event holds no body: the relay reads the
 * event itself, so a payload is stored once.
 */
const appendSql = (s: string): string => `
  WITH current AS (
    SELECT coalesce(max(stream_version), 0)::int AS v FROM "${s}".events WHERE stream_id = $1
  ), ins AS (
    INSERT INTO "${s}".events
      (stream_id, stream_version, event_id, type, version, data, correlation_id, causation_id, trace, occurred_at)
    SELECT $1, current.v + e.ord::int, e.event_id, e.type, e.version, e.data, e.correlation_id, e.causation_id, $9::jsonb, e.occurred_at
    FROM current,
         unnest($3::uuid[], $4::text[], $5::int[], $6::jsonb[], $7::text[], $8::text[], $10::timestamptz[])
           WITH ORDINALITY AS e(event_id, type, version, data, correlation_id, causation_id, occurred_at, ord)
    WHERE $2::int IS NULL OR current.v = $2::int
    ORDER BY e.ord
    RETURNING global_position, stream_version, event_id
  ), outboxed AS (
    INSERT INTO "${s}".outbox (event_id, subject, type, version, trace)
    SELECT ins.event_id, o.subject, o.type, o.version, $9::jsonb
    FROM ins JOIN unnest($3::uuid[], $11::text[], $4::text[], $5::int[]) AS o(event_id, subject, type, version) USING (event_id)
    ORDER BY ins.stream_version
    RETURNING 1
  )
  SELECT (SELECT v FROM current) AS current_version,
         (SELECT count(*) FROM outboxed) AS outboxed,
         coalesce((SELECT json_agg(json_build_object('p', global_position, 'v', stream_version) ORDER BY stream_version) FROM ins), '[]'::json) AS inserted`;

/** A message for the outbox: a validated envelope and the subject it goes out on. */
export interface OutboxMessage {
  readonly envelope: Envelope;
  readonly subject: string;
}

/**
 * Writes messages to the outbox inside `tx` and wakes the relay once it commits (never if it rolls
 * back). Events are enqueued by `append`; handlers call this directly for commands they send as a
 * consequence of what they handled.
 */
export const enqueueOutbox = async (
  tx: Tx,
  messages: readonly OutboxMessage[],
  notifier: OutboxNotifier,
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
  tx.onCommit(() => notifier.kick());
};

/**
 * Wakes the outbox relay after commits, coalesced: at most one NOTIFY is in flight per process, and
 * commits that happen meanwhile share the next one. NOTIFY is sent after the commit rather than
 * inside the appending transaction because Postgres serializes the commits of notifying
 * transactions (a global lock), which would cap appends at one commit at a time.
 */
export class OutboxNotifier {
  private inFlight = false;
  private again = false;

  constructor(
    private readonly db: Database,
    readonly channel: string,
  ) {}

  kick(): void {
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    void this.send();
  }

  private async send(): Promise<void> {
    do {
      this.again = false;
      // A lost notification only delays publishing until the relay's safety-net poll.
      await this.db.query(`SELECT pg_notify($1, '')`, [this.channel]).catch(() => undefined);
    } while (this.again);
    this.inFlight = false;
  }
}
