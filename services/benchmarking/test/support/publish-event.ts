import { buildEnvelope, type Envelope, type InputOf, type MessageDefinition } from '@gpunet/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';

/**
 * Publishes an event on its stream (namespaced by `prefix`), as its service's outbox relay would;
 * returns its envelope.
 */
export const publishEvent = async <D extends MessageDefinition>(
  js: JetStreamClient,
  prefix: string,
  def: D,
  data: InputOf<D>,
  streamId: string,
): Promise<Envelope> => {
  const envelope = buildEnvelope(def, data, { streamId });
  await js.publish(def.subject({} as never, prefix), JSON.stringify(envelope), { msgID: envelope.eventId });
  return envelope;
};
