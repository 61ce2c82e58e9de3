import type { Envelope, MessageRegistry } from '@gpunet/contracts';
import { ConcurrencyError, type ExpectedVersion } from '../errors';
import { currentTraceRecord, type TraceRecord } from '../tracing';
import {
  type AppendBatcherOptions,
  AppendBatcher,
  type AppendOutcome,
  type PreparedAppend,
  runAppendBatch,
} from './append-batch';
import type { Database, Tx } from './database';

/**
 * An event to append: an envelope without its stream position, which the store assigns. A wire
 * event (a registered type and its version) is validated and published through the outbox; a
 * private one (`version: PRIVATE_EVENT_VERSION`) is stored in its stream, in order with the
 * others, and never published nor validated against the registry (it is a decider's own record).
 */
export interface NewEvent {
  readonly eventId: string;
  readonly type: string;
  /** The registered version of `type`; `PRIVATE_EVENT_VERSION` for a service-private event. */
  readonly version: number;
  readonly data: unknown;
  readonly occurredAt: string;
  readonly correlationId: string;
  readonly causationId: string | null;
  /** Values for the `{tokens}` of the definition's subject template, if it has any. */
  readonly subjectParams?: Readonly<Record<string, string>>;
}

/** The version that marks a service-private event: stored, never published (no wire message has it). */
export const PRIVATE_EVENT_VERSION = 0;

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
    /**
     * Group commit (`Batcher` defaults: two calls in flight, 64 appends a call). One call in flight
     * measured faster (bench/eventing), but with it the cluster e2e test "execution service
     * SIGKILLed mid-job" timed out in two full CI runs out of two (its third job never started),
     * and passed run alone; with two it passed in CI. No service in that test appends outside a
     * transaction, so how the group commit could matter there is not understood
     * (libs/eventing/README.md); until it is, two stay the default.
     */
    batching: AppendBatcherOptions = {},
  ) {
    this.notifier = new OutboxNotifier(db, `${db.schema}_outbox`);
    // Single statements outside a transaction, each committing when it returns, straight on the
    // pool (`Database.read`): no TypeORM query runner per call.
    const groupCommit: Tx = {
      schema: db.schema,
      manager: db.dataSource.manager,
      query: (sql, params, statement) => db.read(sql, params, statement),
      execute: (sql, params) => db.execute(sql, params),
      write: () => {
        throw new Error('the group commit runs single statements; it has no transaction to write in');
      },
      onCommit: (fn) => fn(),
    };
    this.batcher = new AppendBatcher(
      (appends) => runAppendBatch(groupCommit, appends),
      () => this.notifier.kick(),
      batching,
    );
  }

  /** Wakes the outbox relay after commits; see `OutboxNotifier`. */
  readonly notifier: OutboxNotifier;

  /** Group commit of appends outside a caller's transaction. */
  private readonly batcher: AppendBatcher;

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
    // Outside a caller's transaction, appends are group-committed (AppendBatcher): one statement,
    // atomic on its own, in autocommit, shared with the appends that arrive meanwhile.
    return this.appendIn(options.tx, streamId, events, options.expectedVersion);
  }

  private async appendIn(
    tx: Tx | undefined,
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
    // Validate before touching the database: no invalid wire event is ever stored.
    const validated = events.map((e) => {
      if (e.version === PRIVATE_EVENT_VERSION) {
        if (this.registry.has(e.type))
          throw new Error(`${e.type} is a wire message: it cannot be appended as a private event`);
        return { event: e, data: e.data, subject: null };
      }
      const def = this.registry.get(e.type, e.version);
      return {
        event: e,
        data: this.registry.validate(def, e.data),
        subject: def.subject(e.subjectParams as never, this.subjectPrefix),
      };
    });
    const prepared: PreparedAppend = {
      streamId,
      expected: mustBe,
      trace: currentTraceRecord(),
      events: validated.map(({ event, data, subject }) => ({
        eventId: event.eventId,
        type: event.type,
        version: event.version,
        dataJson: JSON.stringify(data),
        correlationId: event.correlationId,
        causationId: event.causationId,
        occurredAt: event.occurredAt,
        subject,
      })),
    };
    let outcome: AppendOutcome;
    if (tx) {
      [outcome] = (await runAppendBatch(tx, [prepared])) as [AppendOutcome];
      if (outcome.ok) tx.onCommit(() => this.notifier.kick());
    } else {
      outcome = await this.batcher.submit(prepared);
    }
    if (!outcome.ok) throw new ConcurrencyError(streamId, expected, outcome.current);
    const { current, positions, versions } = outcome;
    return {
      nextExpectedVersion: current + events.length,
      events: validated.map(({ event, data }, i) => ({
        eventId: event.eventId,
        type: event.type,
        version: event.version,
        streamId,
        streamVersion: versions[i]!,
        occurredAt: event.occurredAt,
        correlationId: event.correlationId,
        causationId: event.causationId,
        data,
        globalPosition: positions[i]!,
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
    const stored = {
      eventId: r.event_id,
      type: r.type,
      version: r.version,
      streamId: r.stream_id,
      streamVersion: r.stream_version,
      occurredAt: r.occurred_at.toISOString(),
      correlationId: r.correlation_id,
      causationId: r.causation_id,
      data: r.data,
    };
    // A private event is the decider's own record, not a wire message: the registry does not know it.
    const envelope = r.version === PRIVATE_EVENT_VERSION ? stored : this.registry.parse(stored);
    return { ...envelope, globalPosition: Number(r.global_position) };
  }
}

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

/** A relay in this process, as the notifier sees it. */
export interface LocalRelay {
  /** Called after a commit in this process that put rows in the relay's outbox. */
  onCommitted(): void;
  /** Whether it holds the relay lock now (it publishes; relays elsewhere stand by). */
  readonly isLeader: boolean;
}

/** Relays of this process by NOTIFY channel (`OutboxRelay` registers itself while it runs). */
const localRelays = new Map<string, Set<LocalRelay>>();

/** Registers `relay` for commits on `channel` in this process; returns the unregistration. */
export const registerLocalRelay = (channel: string, relay: LocalRelay): (() => void) => {
  const relays = localRelays.get(channel) ?? new Set();
  localRelays.set(channel, relays.add(relay));
  return () => {
    relays.delete(relay);
    if (relays.size === 0) localRelays.delete(channel);
  };
};

/**
 * Wakes the outbox relay after commits. A relay in this process is woken at once, in memory; when
 * it is the leader nobody else needs waking and no NOTIFY is sent. Otherwise (the leader runs in
 * another process) a NOTIFY goes out, coalesced: at most one is in flight per process, and commits
 * that happen meanwhile share the next one. NOTIFY is sent after the commit rather than inside the
 * appending transaction because Postgres serializes the commits of notifying transactions (a global
 * lock), which would cap appends at one commit at a time.
 */
export class OutboxNotifier {
  private inFlight = false;
  private again = false;

  constructor(
    private readonly db: Database,
    readonly channel: string,
  ) {}

  kick(): void {
    let leaderHere = false;
    for (const relay of localRelays.get(this.channel) ?? []) {
      relay.onCommitted();
      leaderHere ||= relay.isLeader;
    }
    // A leader elsewhere that missed this (leadership moving right now) finds the rows when it
    // takes over, or at its next poll.
    if (leaderHere) return;
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
