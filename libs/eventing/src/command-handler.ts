import {
  type Clock,
  type Decider,
  type DomainEvent,
  type MessageRegistry,
  newEventId,
} from '@gpunet/contracts';
import { isConcurrencyError } from './errors';
import type { Database, Tx } from './postgres/database';
import {
  type NewEvent,
  type PostgresEventStore,
  PRIVATE_EVENT_VERSION,
  type StoredEvent,
} from './postgres/event-store';
import { lockStream } from './postgres/stream-lock';
import { type Snapshot, SnapshotStore } from './postgres/snapshots';

/** Where a command comes from. Both default sensibly; pass what the caller knows. */
export interface CommandMetadata {
  /**
   * The chain the command belongs to. Default: the stream's own (its last event's), so that a
   * timer's or a reply's decision on a job keeps the job's correlation; the command's id for a new
   * stream.
   */
  readonly correlationId?: string;
  /**
   * The message or command that caused this one: its events' `causationId`. Default: the stream's
   * last event — a decision the service takes on its own (a timer, a tick) is caused by the state
   * it was taken on, so the causal chain never breaks — or, for a new stream, the command's id.
   */
  readonly causationId?: string;
}

/** What a decision looks like to `effects`, inside its transaction. */
export interface Decision<C, E extends DomainEvent, S> {
  readonly tx: Tx;
  readonly streamId: string;
  readonly command: C;
  readonly before: S;
  readonly events: readonly E[];
  readonly after: S;
  /** The events as appended (ids, versions, causation). */
  readonly stored: readonly StoredEvent[];
}

export interface CommandHandlerOptions<C, E extends DomainEvent, S> {
  readonly db: Database;
  readonly store: PostgresEventStore;
  readonly registry: MessageRegistry;
  readonly decider: Decider<C, E, S>;
  readonly clock: Clock;
  /**
   * `optimistic` (default): read, decide, append at the read version; a rival's append in between
   * fails ours and the command is decided again. `serial`: every decision on a stream takes the
   * stream's lock for its transaction first, so decisions queue instead of conflicting — for streams
   * that many writers hit at once (fifty usage reports of one job).
   */
  readonly concurrency?: 'optimistic' | 'serial';
  /** Times a command is decided again after a concurrency conflict. Default 3. */
  readonly maxRetries?: number;
  /**
   * Which events are wire messages, published through the outbox. The others are stored in the
   * stream as private events (never published, not in the registry). Default: every event.
   */
  readonly publishes?: (event: E) => boolean;
  /** Values of a published event's subject `{tokens}`, when its definition has any. */
  readonly subjectParams?: (event: E) => Readonly<Record<string, string>> | undefined;
  /**
   * Keep the state after each decision as a snapshot, in `format`: a decision then reads the
   * snapshot and the events after it rather than the whole stream. Raise `format` whenever the
   * state's shape or `evolve` changes; snapshots of another format are ignored. The state must be
   * JSON (no bigint, no Date).
   */
  readonly snapshots?: { readonly format: number };
  /**
   * Runs in the decision's transaction, after its events were appended (and only when there are
   * any): what must commit with them or not at all (ledger transfers, a table the service reads).
   * A throw fails the transaction: nothing of the decision is kept.
   */
  readonly effects?: (decision: Decision<C, E, S>) => Promise<void>;
  /** Event and command id source; injectable for deterministic tests. Default UUIDv7. */
  readonly newId?: () => string;
}

export interface HandledCommand<E extends DomainEvent, S> {
  /** The command's id (a new stream's events are caused by it unless the caller named a cause). */
  readonly commandId: string;
  /** Every event appended (empty when the decider decided nothing), private ones included. */
  readonly events: readonly StoredEvent[];
  readonly domainEvents: readonly E[];
  readonly before: S;
  readonly state: S;
  readonly nextExpectedVersion: number;
}

/**
 * A command, or a function that builds it from the state (null: nothing to decide), reading what
 * else it needs in `tx` (undefined when the decision runs outside a transaction).
 */
export type CommandInput<C, S> = C | ((state: S, tx: Tx | undefined) => C | null | Promise<C | null>);

/**
 * The one write path of an event-sourced service (emmett's command handler): load the stream (or
 * its snapshot and what followed) → build the command → decide → append at the loaded version →
 * effects → snapshot, all in one transaction — the caller's (a consumer's batch) or its own. A
 * concurrency conflict means someone appended meanwhile; because `decide` is pure and nothing of
 * the attempt was kept (the append is rejected whole), reading and deciding again is always safe,
 * so it is retried up to `maxRetries` times, inside the caller's transaction too.
 *
 * Every event gets the clock's time, a fresh id, the chain's `correlationId` and the `causationId`
 * of what caused it (`CommandMetadata`): never null.
 */
export class CommandHandler<C, E extends DomainEvent, S> {
  private readonly snapshots: SnapshotStore | undefined;
  private readonly newId: () => string;

  constructor(private readonly options: CommandHandlerOptions<C, E, S>) {
    this.snapshots = options.snapshots ? new SnapshotStore(options.snapshots.format) : undefined;
    this.newId = options.newId ?? newEventId;
  }

  /** Decides `command` on `streamId`: in `tx` when given (its commit is the caller's), else in its own. */
  async handle(
    streamId: string,
    command: CommandInput<C, S>,
    metadata: CommandMetadata = {},
    tx?: Tx,
  ): Promise<HandledCommand<E, S>> {
    const commandId = this.newId();
    const attempts = (this.options.maxRetries ?? 3) + 1;
    // Without a lock, effects or a snapshot to write with it, a decision needs no transaction of its
    // own: the read and the group-committed append (one statement) suffice.
    const own =
      this.options.concurrency === 'serial' ||
      this.options.effects !== undefined ||
      this.snapshots !== undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return tx || !own
          ? await this.once(tx, streamId, command, metadata, commandId)
          : await this.options.db.transaction((t) => this.once(t, streamId, command, metadata, commandId));
      } catch (error) {
        if (!isConcurrencyError(error) || attempt >= attempts) throw error;
      }
    }
  }

  /** The state of `streamId` now (its snapshot and what followed, or its whole stream). */
  async load(streamId: string, tx?: Tx): Promise<{ state: S; version: number }> {
    const { state, version } = await this.read(tx, streamId);
    return { state, version };
  }

  private async read(
    tx: Tx | undefined,
    streamId: string,
  ): Promise<{
    state: S;
    version: number;
    correlationId: string | undefined;
    lastEventId: string | undefined;
  }> {
    const { store, decider, db } = this.options;
    const snapshot: Snapshot | undefined = await this.snapshots?.read(tx ?? db, streamId);
    const base = snapshot ? (snapshot.state as S) : decider.initialState;
    const from = snapshot ? snapshot.version + 1 : 1;
    const history = await store.readStream(streamId, { ...(tx ? { tx } : {}), fromVersion: from });
    const state = (history.map(toDomainEvent) as E[]).reduce((s, e) => decider.evolve(s, e), base);
    return {
      state,
      version: history.at(-1)?.streamVersion ?? snapshot?.version ?? 0,
      correlationId: history.at(-1)?.correlationId ?? snapshot?.correlationId,
      lastEventId: history.at(-1)?.eventId ?? snapshot?.lastEventId,
    };
  }

  private async once(
    tx: Tx | undefined,
    streamId: string,
    input: CommandInput<C, S>,
    metadata: CommandMetadata,
    commandId: string,
  ): Promise<HandledCommand<E, S>> {
    const { store, decider, clock, registry } = this.options;
    if (this.options.concurrency === 'serial') await lockStream(required(tx), streamId);
    const { state, version, correlationId, lastEventId } = await this.read(tx, streamId);
    const command =
      typeof input === 'function'
        ? await (input as (s: S, t: Tx | undefined) => C | null | Promise<C | null>)(state, tx)
        : input;
    const decided = command === null ? [] : decider.decide(command, state);
    if (decided.length === 0)
      return { commandId, events: [], domainEvents: [], before: state, state, nextExpectedVersion: version };
    const occurredAt = clock.now().toISOString();
    const correlation = metadata.correlationId ?? correlationId ?? commandId;
    const causation = metadata.causationId ?? lastEventId ?? commandId;
    const publishes = this.options.publishes ?? (() => true);
    const events: NewEvent[] = decided.map((e) => {
      const wire = publishes(e);
      const params = wire ? this.options.subjectParams?.(e) : undefined;
      return {
        eventId: this.newId(),
        type: e.type,
        version: wire ? registry.get(e.type).version : PRIVATE_EVENT_VERSION,
        data: e.data,
        occurredAt,
        correlationId: correlation,
        causationId: causation,
        ...(params ? { subjectParams: params } : {}),
      };
    });
    const result = await store.append(streamId, events, {
      expectedVersion: version === 0 ? 'no_stream' : version,
      ...(tx ? { tx } : {}),
    });
    const after = decided.reduce((s, e) => decider.evolve(s, e), state);
    await this.options.effects?.({
      tx: required(tx),
      streamId,
      command: command!,
      before: state,
      events: decided,
      after,
      stored: result.events,
    });
    await this.snapshots?.write(required(tx), streamId, {
      state: after,
      version: result.nextExpectedVersion,
      correlationId: correlation,
      lastEventId: result.events.at(-1)!.eventId,
    });
    return {
      commandId,
      events: result.events,
      domainEvents: decided,
      before: state,
      state: after,
      nextExpectedVersion: result.nextExpectedVersion,
    };
  }
}

const toDomainEvent = (e: StoredEvent): DomainEvent => ({ type: e.type, data: e.data });

/** `handle` opens a transaction whenever a lock, effects or a snapshot need one. */
const required = (tx: Tx | undefined): Tx => {
  if (!tx) throw new Error('CommandHandler: this decision needs a transaction');
  return tx;
};
