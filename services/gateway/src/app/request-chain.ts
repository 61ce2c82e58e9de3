import { type InputOf, type MessageDefinition, newEventId, originOf } from '@gpunet/contracts';
import {
  type EventingRuntime,
  type ExpectedVersion,
  lockStream,
  type StoredEvent,
  type Tx,
} from '@gpunet/eventing';

/**
 * The id of a request that starts a chain (UUIDv7): what it appends carries it as correlation and
 * cause (`originOf`), and the client gets it back in `X-Correlation-Id`.
 */
export const newRequestId = (): string => newEventId();

/** Appends what request `requestId` asked for, in `tx`: the first event of the request's chain. */
export const appendRequested = async <D extends MessageDefinition>(
  eventing: EventingRuntime,
  tx: Tx,
  request: {
    readonly requestId: string;
    readonly streamId: string;
    readonly expectedVersion: ExpectedVersion;
  },
  def: D,
  data: InputOf<D>,
): Promise<StoredEvent> => {
  // Requests share streams (every request on a subnet is on `subnet-<id>`): without the lock, two at
  // once would both append the stream's next version and one would fail on the other's.
  await lockStream(tx, request.streamId);
  const { events } = await eventing.store.append(
    request.streamId,
    [eventing.envelopes.event(def, data, originOf(request.requestId))],
    { expectedVersion: request.expectedVersion, tx },
  );
  return events[0]!;
};
