import {
  type Decider,
  type DomainEvent,
  foldEvents,
  type MessageRegistry,
  newEventId,
} from '@gpunet/contracts';
import type { Clock } from '@gpunet/contracts';
import { isConcurrencyError } from './errors';
import type { Tx } from './postgres/database';
import type { AppendResult, NewEvent, PostgresEventStore, StoredEvent } from './postgres/event-store';

export interface CommandMetadata {
  readonly correlationId: string;
  readonly causationId?: string | null;
}

export interface CommandHandlerOptions<C, E extends DomainEvent, S> {
  readonly store: PostgresEventStore;
  readonly registry: MessageRegistry;
  readonly decider: Decider<C, E, S>;
  readonly clock: Clock;
  /** Times a command is re-decided after a concurrency conflict. Default 3. */
  readonly maxRetries?: number;
  /** Event id source; injectable for deterministic tests. Default UUIDv7. */
  readonly newId?: () => string;
}

export interface HandledCommand<E extends DomainEvent, S> {
  /** The events appended (empty when the decider decided nothing). */
  readonly events: readonly StoredEvent[];
  readonly domainEvents: readonly E[];
  readonly state: S;
  readonly nextExpectedVersion: number;
}

/**
 * The generic command handler (emmett): load the stream → fold → decide → append at the loaded
 * version. A concurrency conflict means someone else appended meanwhile; because `decide` is pure,
 * re-loading and deciding again is always safe, so it retries up to `maxRetries` times. Inside a
 * caller's transaction (`tx`), a conflict aborts that transaction, so it is not retried here.
 */
export class CommandHandler<C, E extends DomainEvent, S> {
  constructor(private readonly options: CommandHandlerOptions<C, E, S>) {}

  async handle(
    streamId: string,
    command: C,
    metadata: CommandMetadata,
    tx?: Tx,
  ): Promise<HandledCommand<E, S>> {
    const attempts = tx ? 1 : (this.options.maxRetries ?? 3) + 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(streamId, command, metadata, tx);
      } catch (error) {
        if (!isConcurrencyError(error) || attempt >= attempts) throw error;
      }
    }
  }

  private async once(
    streamId: string,
    command: C,
    metadata: CommandMetadata,
    tx?: Tx,
  ): Promise<HandledCommand<E, S>> {
    const { store, decider, clock } = this.options;
    const history = await store.readStream(streamId, tx ? { tx } : {});
    const state = foldEvents(decider, history.map(toDomainEvent) as E[]);
    const decided = decider.decide(command, state);
    if (decided.length === 0)
      return { events: [], domainEvents: [], state, nextExpectedVersion: history.length };
    const occurredAt = clock.now().toISOString();
    const newId = this.options.newId ?? newEventId;
    const events: NewEvent[] = decided.map((e) => ({
      eventId: newId(),
      type: e.type,
      version: this.options.registry.get(e.type).version,
      data: e.data,
      occurredAt,
      correlationId: metadata.correlationId,
      causationId: metadata.causationId ?? null,
    }));
    const result: AppendResult = await store.append(streamId, events, {
      expectedVersion: history.length === 0 ? 'no_stream' : history.length,
      ...(tx ? { tx } : {}),
    });
    return {
      events: result.events,
      domainEvents: decided,
      state: decided.reduce((s, e) => decider.evolve(s, e), state),
      nextExpectedVersion: result.nextExpectedVersion,
    };
  }
}

const toDomainEvent = (e: StoredEvent): DomainEvent => ({ type: e.type, data: e.data });
