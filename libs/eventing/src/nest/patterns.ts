import type { MessageDefinition, QueryDefinition } from '@gpunet/contracts';
import type { BackoffPolicy } from '../backoff';

/** How one durable consumer runs (every default is `DurableConsumer`'s). */
export interface DurableSettings {
  /** Deliveries before a failing message is dead-lettered. Default 5. */
  readonly maxAttempts?: number;
  /** Delay before a failed message is redelivered, growing per delivery. */
  readonly backoff?: BackoffPolicy;
  /** Messages applied per transaction. Default 128. */
  readonly batchSize?: number;
  /** Unacknowledged messages the server lets the consumer hold. Default 1024. */
  readonly maxAckPending?: number;
  /** The server redelivers a message not acknowledged within this many ms. Default 30 000. */
  readonly ackWaitMs?: number;
}

/** The `@EventPattern` extras that bind a handler to a durable consumer (see `durable`). */
export interface DurableBinding {
  readonly name: string;
  readonly settings: DurableSettings;
  /**
   * A batch consumer's one handler method gets every new message of a consumer batch at once
   * (`EventBatchContext`), in stream order, in the batch's transaction.
   */
  readonly batch: boolean;
  /** Tells apart the methods bound to one durable (a batch consumer must have exactly one). */
  readonly method: symbol;
}

const DURABLE = 'gpunetDurable';
const EPHEMERAL = 'gpunetEphemeral';
const QUERY = 'gpunetQuery';

/**
 * Extras for `@EventPattern(definitions, durable(name))`: the handler runs on the durable JetStream
 * consumer `name` (also its inbox and checkpoint key; letters, digits, `-`, `_`). Several handler
 * methods may share a consumer — each on its own message types, with the same settings (the
 * transport refuses to start otherwise). A consumer's messages must all be on one stream.
 *
 * ```ts
 * @EventPattern(JobFunded, durable('scheduler-funded-jobs'))
 * funded(@Payload() job: PayloadOf<typeof JobFunded>, @Ctx() ctx: EventContext) { … }
 * ```
 */
export const durable = (
  name: string,
  settings: DurableSettings & { readonly batch?: boolean } = {},
): Record<string, unknown> => {
  const { batch = false, ...rest } = settings;
  const binding: DurableBinding = { name, settings: rest, batch, method: Symbol(name) };
  return { [DURABLE]: binding };
};

/** The `@EventPattern` extras that bind a handler to a core-NATS subscription (see `ephemeral`). */
export interface EphemeralBinding {
  readonly name: string;
  /** Queue group: replicas share the messages. None: every replica gets every message. */
  readonly queue?: string;
}

/**
 * Extras for `@EventPattern(definitions, ephemeral(name, { queue }))`: the handler gets messages as
 * they pass on core NATS, without JetStream, a transaction or redelivery — for signals that are
 * worth nothing once late (heartbeats, "re-read this provider" hints). Each message is validated
 * against the registry first; what does not decode or is off contract is counted
 * (`gpunet_subscription_rejected_total`) and dropped, and a handler's error is reported, never
 * retried. `name` labels the subscription's metrics.
 */
export const ephemeral = (
  name: string,
  options: { readonly queue?: string } = {},
): Record<string, unknown> => {
  const binding: EphemeralBinding = { name, ...(options.queue ? { queue: options.queue } : {}) };
  return { [EPHEMERAL]: binding };
};

/** How a query is served (see `served`). */
export interface QueryServing {
  /** Queue group: replicas of a service share the load. Default: the query's name. */
  readonly queue?: string;
  /**
   * Check each response against the definition before sending it (default true). The asker checks
   * every reply either way; a handler building large responses from validated state may skip it.
   */
  readonly validateResponses?: boolean;
}

/** Extras for `@MessagePattern(query, served({ queue }))`. */
export const served = (serving: QueryServing): Record<string, unknown> => ({ [QUERY]: serving });

export const durableOf = (extras: Record<string, unknown> | undefined): DurableBinding | undefined =>
  extras?.[DURABLE] as DurableBinding | undefined;

export const ephemeralOf = (extras: Record<string, unknown> | undefined): EphemeralBinding | undefined =>
  extras?.[EPHEMERAL] as EphemeralBinding | undefined;

export const servingOf = (extras: Record<string, unknown> | undefined): QueryServing =>
  (extras?.[QUERY] as QueryServing | undefined) ?? {};

export const isMessageDefinition = (pattern: unknown): pattern is MessageDefinition =>
  typeof pattern === 'object' &&
  pattern !== null &&
  ((pattern as MessageDefinition).kind === 'event' || (pattern as MessageDefinition).kind === 'command') &&
  typeof (pattern as MessageDefinition).filter === 'function';

export const isQueryDefinition = (pattern: unknown): pattern is QueryDefinition =>
  typeof pattern === 'object' &&
  pattern !== null &&
  (pattern as QueryDefinition).kind === 'query' &&
  typeof (pattern as QueryDefinition).subject === 'function';
