import {
  buildEnvelope,
  type Causation,
  type Clock,
  type Envelope,
  type InputOf,
  type MessageDefinition,
  newEventId,
  type PayloadOf,
  type TypeOf,
} from '@gpunet/contracts';
import type { NewEvent } from './postgres/event-store';

/**
 * The one place a service stamps messages: a fresh id, the injected clock's time, and the
 * causation the caller names (`causedBy(envelope)` for what a consumed message caused,
 * `originOf(requestId)` for a chain's first message). Decisions get theirs from `CommandHandler`;
 * everything else a service appends or sends is stamped here.
 */
export class Envelopes {
  private readonly newId: () => string;

  constructor(
    private readonly clock: Clock,
    /** Id source; injectable for deterministic tests. Default UUIDv7. */
    newId?: () => string,
  ) {
    this.newId = newId ?? newEventId;
  }

  /** An event of `def` to append to a stream (the store validates it and assigns its position). */
  event<D extends MessageDefinition>(
    def: D,
    data: InputOf<D>,
    cause: Causation,
    subjectParams?: Readonly<Record<string, string>>,
  ): NewEvent {
    return {
      eventId: this.newId(),
      type: def.type,
      version: def.version,
      data,
      occurredAt: this.clock.now().toISOString(),
      correlationId: cause.correlationId,
      causationId: cause.causationId,
      ...(subjectParams ? { subjectParams } : {}),
    };
  }

  /**
   * A message that is sent rather than stored in a stream (a command to an edge, a request):
   * validated against `def` (`InvalidMessageError` naming the field), stream version 0.
   */
  message<D extends MessageDefinition>(
    def: D,
    data: InputOf<D>,
    streamId: string,
    cause: Causation,
  ): Envelope<TypeOf<D>, PayloadOf<D>> {
    return buildEnvelope(def, data, {
      streamId,
      eventId: this.newId(),
      occurredAt: this.clock.now(),
      correlationId: cause.correlationId,
      causationId: cause.causationId,
    });
  }
}
