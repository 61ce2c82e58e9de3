import {
  buildEnvelope,
  type Envelope,
  type InputOf,
  type MessageDefinition,
  newEventId,
} from '@gpunet/contracts';

/** An envelope for `def` as another service would publish it. */
export const message = <D extends MessageDefinition>(def: D, data: InputOf<D>, streamId = 'test'): Envelope =>
  buildEnvelope(def, data, { streamId, eventId: newEventId() });
