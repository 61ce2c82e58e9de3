import type { Envelope } from './envelope';
import { InvalidMessageError } from './errors';
import { newEventId } from './ids';
import { toIssues } from './issues';
import type { InputOf, MessageDefinition, PayloadOf, TypeOf } from './message';

/** Metadata a producer supplies; ids and times default to fresh ones outside deterministic code. */
export interface EnvelopeInit {
  readonly streamId: string;
  readonly streamVersion?: number;
  readonly eventId?: string;
  readonly occurredAt?: Date | string;
  readonly correlationId?: string;
  readonly causationId?: string | null;
}

/**
 * Builds an envelope for `def`, validating the payload. A payload of the wrong shape fails to
 * compile; one that passes the compiler but not the schema (a string too long, say) throws
 * `InvalidMessageError` with the field's path.
 */
export const buildEnvelope = <D extends MessageDefinition>(
  def: D,
  data: InputOf<D>,
  init: EnvelopeInit,
): Envelope<TypeOf<D>, PayloadOf<D>> => {
  const parsed = def.schema.safeParse(data);
  if (!parsed.success)
    throw new InvalidMessageError(`${def.type} v${def.version}`, toIssues(parsed.error, ['data']));
  const eventId = init.eventId ?? newEventId();
  const occurredAt = init.occurredAt ?? new Date();
  return {
    eventId,
    type: def.type as TypeOf<D>,
    version: def.version,
    streamId: init.streamId,
    streamVersion: init.streamVersion ?? 0,
    occurredAt: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(),
    correlationId: init.correlationId ?? eventId,
    causationId: init.causationId ?? null,
    data: parsed.data as PayloadOf<D>,
  };
};

/**
 * Where a message comes from: the chain it belongs to (`correlationId`, the id of the request that
 * started it, carried unchanged through every hop) and the message or command that caused it.
 */
export interface Causation {
  readonly correlationId: string;
  readonly causationId: string;
}

/** The causation of a message caused by `cause`: the same correlation, caused by the cause's id. */
export const causedBy = (cause: Pick<Envelope, 'eventId' | 'correlationId'>): Causation => ({
  correlationId: cause.correlationId,
  causationId: cause.eventId,
});

/**
 * The causation of a chain's first message: the request (a REST call, a CLI command, a timer's
 * decision) whose id starts the correlation and is the cause.
 */
export const originOf = (requestId: string): Causation => ({
  correlationId: requestId,
  causationId: requestId,
});
