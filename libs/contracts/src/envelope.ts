import { z } from 'zod';
import { EventIdSchema } from './ids';

/**
 * Metadata every message carries beside its payload (STYLE.md, "Messages"). Trace context does not
 * live here: it travels in the NATS headers (`traceparent`, `tracestate`) and in the event store's
 * metadata column, so that a trace survives the outbox hop.
 */
export const EnvelopeMetaSchema = z.strictObject({
  /** UUIDv7, unique per message; also the `Nats-Msg-Id` the broker de-duplicates on. */
  eventId: EventIdSchema,
  /** Registered message type, e.g. `job.placed`. */
  type: z.string().regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/, 'must look like aggregate.event'),
  /** Schema version of `data`. */
  version: z.int().min(1).max(1000),
  /** The aggregate stream the event belongs to (`job-<id>`); commands use their target. */
  streamId: z.string().min(1).max(200),
  /** Position of the event in its stream, from 1; 0 for messages that are not stored in a stream. */
  streamVersion: z.int().min(0),
  /** ISO-8601 UTC instant at which the event was decided. */
  occurredAt: z.iso.datetime({ offset: false }),
  /** Id of the request that started the chain of messages this one belongs to. */
  correlationId: z.string().min(1).max(200),
  /** `eventId` of the message that caused this one, or null for a chain's first message. */
  causationId: z.string().min(1).max(200).nullable(),
});

export type EnvelopeMeta = z.infer<typeof EnvelopeMetaSchema>;

/** A message as it travels and is stored: metadata plus a typed payload. */
export interface Envelope<T extends string = string, D = unknown> extends Omit<EnvelopeMeta, 'type'> {
  readonly type: T;
  readonly data: D;
}

/** The wire/storage form before its payload is checked against the registry. */
export const RawEnvelopeSchema = EnvelopeMetaSchema.extend({ data: z.unknown() });

/** Header names set on every NATS message. */
export const Headers = {
  /** JetStream de-duplicates on this within the stream's duplicate window. */
  msgId: 'Nats-Msg-Id',
  type: 'Gpunet-Type',
  version: 'Gpunet-Version',
  /** Set on dead letters: why the message could not be handled. */
  deadLetterReason: 'Gpunet-Dead-Letter-Reason',
} as const;
