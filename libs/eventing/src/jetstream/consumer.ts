import {
  buildEnvelope,
  type Envelope,
  Headers,
  type MessageDefinition,
  MessageDeadLettered,
  type MessageRegistry,
  namespacedStream,
  type StreamDefinition,
} from '@gpunet/contracts';
import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { type NatsConnection, headers as natsHeaders } from '@nats-io/nats-core';
import { type BackoffPolicy, backoffDelay } from '../backoff';
import { subjectMatcher } from './subject-filter';
import { errorCode, isRetryable, isTransientInfrastructureError, UndecodableMessageError } from '../errors';
import type { EventingMetrics } from '../metrics';
import { type Database, sqlArrayLiteral, sqlLiteral, type Tx } from '../postgres/database';
import { trace } from '@opentelemetry/api';
import { Attr, AttrValue, extractFromHeaders, inSpan, SpanKind } from '../tracing';

/** What a handler gets besides the envelope. */
export interface HandlerContext {
  /** The transaction that also records the inbox entry and checkpoint: write your effects with it. */
  readonly tx: Tx;
  readonly subject: string;
  readonly streamSequence: number;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
}

/** Applies one message. Throw to retry (with backoff) or `PermanentHandlerError` to dead-letter at once. */
export type MessageHandler = (envelope: Envelope, context: HandlerContext) => Promise<void>;

/** Applies several messages in one go, in stream order. */
export type BatchHandler = (envelopes: readonly Envelope[], context: { readonly tx: Tx }) => Promise<void>;

export interface DurableConsumerOptions {
  /** Durable name: also the inbox and checkpoint key. Letters, digits, `-`, `_`. */
  readonly name: string;
  readonly stream: StreamDefinition;
  /** The messages this consumer wants; the server filters on their subjects where it can. */
  readonly messages: readonly MessageDefinition[];
  /** Applies one message. Give this or `handleBatch`. */
  readonly handle?: MessageHandler;
  /**
   * Applies a batch at once (bulk upserts in a projection, say): called with every new message of a
   * batch, in stream order, inside the batch's transaction. When it throws, the batch is retried one
   * message at a time, so a failing message is isolated as with `handle`.
   */
  readonly handleBatch?: BatchHandler;
  readonly registry: MessageRegistry;
  readonly db: Database;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** Namespace prefix of streams and subjects (tests: unique per suite). Default ''. */
  readonly prefix?: string;
  /** Deliveries before a failing message is dead-lettered. Default 5. */
  readonly maxAttempts?: number;
  /** Delay before a failed message is redelivered, growing per delivery. */
  readonly backoff?: BackoffPolicy;
  /** Messages applied per transaction. Default 128. */
  readonly batchSize?: number;
  /** Unacknowledged messages the server lets this consumer hold; bounds memory. Default 1024. */
  readonly maxAckPending?: number;
  /** The server redelivers a message not acknowledged within this many ms. Default 30 000. */
  readonly ackWaitMs?: number;
  readonly metrics?: EventingMetrics;
  readonly onError?: (error: unknown, context: string) => void;
  /** Called after a transaction committed, with the envelopes it applied (for awaiters and measurements). */
  readonly afterCommit?: (applied: readonly Envelope[]) => void;
}

interface Decoded {
  readonly msg: JsMsg;
  readonly envelope: Envelope;
}

const CONSUMER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A durable JetStream pull consumer whose effects are exactly-once in Postgres (ADR 0001): per
 * batch, one transaction holds the handlers' writes, the inbox rows that make redelivery harmless
 * and the checkpoint; messages are acknowledged only after it commits. A handler that fails is
 * retried with backoff (nak with delay); after `maxAttempts`, or at once when the failure can never
 * succeed (undecodable message, contract violation, `PermanentHandlerError`), the message goes to
 * the dead-letter stream with the reason, is terminated, counted, and the consumer moves on.
 *
 * A handler may run more than once for a message (its batch fell back to one-by-one, or the process
 * died before the ack): what it writes in the transaction is applied exactly once; side effects
 * outside it must be idempotent.
 *
 * Order: messages are applied in stream order. A message that is retried is applied later than the
 * ones behind it — except those of the same aggregate stream in the same batch, which are held back
 * with it — so handlers must tolerate it, which `streamVersion` lets them detect.
 */
export class DurableConsumer {
  private messages: ConsumerMessages | undefined;
  private readonly queue: JsMsg[] = [];
  private wake: (() => void) | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  private accepts: (subject: string) => boolean = () => true;
  private readonly prefix: string;

  constructor(private readonly options: DurableConsumerOptions) {
    if (!CONSUMER_NAME.test(options.name))
      throw new Error(`consumer name ${JSON.stringify(options.name)} must match ${String(CONSUMER_NAME)}`);
    this.prefix = options.prefix ?? '';
    if ((options.handle === undefined) === (options.handleBatch === undefined)) {
      throw new Error(`consumer ${options.name}: give exactly one of handle and handleBatch`);
    }
  }

  get name(): string {
    return this.options.name;
  }

  get streamName(): string {
    return namespacedStream(this.options.stream, this.prefix).name;
  }

  /** Creates (or updates) the durable consumer on the server and starts applying messages. */
  async start(): Promise<void> {
    if (this.running) return;
    const filters = this.options.messages.map((m) => m.filter(this.prefix));
    await this.ensureServerConsumer(filters);
    const consumer = await this.options.js.consumers.get(this.streamName, this.options.name);
    this.running = true;
    this.messages = await consumer.consume({
      max_messages: Math.min(this.options.maxAckPending ?? 1024, (this.options.batchSize ?? 128) * 4),
      callback: (msg) => {
        this.queue.push(msg);
        this.wake?.();
      },
    });
    this.loop = this.run();
  }

  /** Stops pulling, finishes the batch in hand, leaves the rest to be redelivered. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.messages?.close();
    this.wake?.();
    await this.loop;
    // Messages pulled but not applied are redelivered after ack_wait; hand them back now instead.
    for (const msg of this.queue.splice(0)) msg.nak();
  }

  private async ensureServerConsumer(filters: string[]): Promise<void> {
    const { jsm, nc } = this.options;
    const [major = 0, minor = 0] = (nc.info?.version ?? '0.0').split('.').map(Number);
    const multiFilter = major > 2 || (major === 2 && minor >= 10);
    const config = {
      durable_name: this.options.name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: (this.options.ackWaitMs ?? 30_000) * 1_000_000,
      max_ack_pending: this.options.maxAckPending ?? 1024,
      // Attempts are counted by us (deliveryCount), so that we can dead-letter with the reason.
      max_deliver: -1,
      ...(filters.length === 1
        ? { filter_subject: filters[0] }
        : multiFilter
          ? { filter_subjects: filters }
          : {}),
    };
    if (filters.length > 1 && !multiFilter) {
      // NATS < 2.10 filters on one subject only: take the stream and skip the rest here.
      this.accepts = subjectMatcher(filters);
    }
    try {
      await jsm.consumers.add(this.streamName, config);
    } catch {
      await jsm.consumers.update(this.streamName, this.options.name, config);
    }
  }

  private async run(): Promise<void> {
    const batchSize = this.options.batchSize ?? 128;
    while (this.running || this.queue.length > 0) {
      if (this.queue.length === 0) {
        if (!this.running) break;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      if (!this.running) break;
      const batch = this.queue.splice(0, batchSize);
      try {
        await this.processBatch(batch);
      } catch (error) {
        // Only failures outside any handler land here (e.g. the database is down): retry the batch later.
        this.options.onError?.(error, `consumer ${this.options.name}: batch failed; naking for redelivery`);
        for (const msg of batch) msg.nak(backoffDelay(msg.info.deliveryCount, this.options.backoff));
      }
    }
  }

  private async processBatch(batch: JsMsg[]): Promise<void> {
    const started = performance.now();
    const decoded: Decoded[] = [];
    for (const msg of batch) {
      if (!this.accepts(msg.subject)) {
        msg.ack();
        continue;
      }
      try {
        decoded.push({ msg, envelope: this.options.registry.parse(decodeJson(msg)) });
      } catch (error) {
        // Undecodable or off-contract: no retry can fix it.
        await this.deadLetter(msg, error);
      }
    }
    if (decoded.length === 0) return;
    if (decoded.length === 1) {
      // One message: the careful path is the same work, and failing it once is one attempt, not two.
      await this.applyOneByOne(decoded);
    } else {
      try {
        await this.applyTogether(decoded);
        for (const { msg } of decoded) msg.ack();
      } catch {
        // Some handler failed: apply one by one to isolate it, keeping the others' effects.
        await this.applyOneByOne(decoded);
      }
    }
    this.options.metrics?.batchSeconds.observe(
      { consumer: this.options.name },
      (performance.now() - started) / 1000,
    );
  }

  /** The fast path: the whole batch in one transaction. */
  private async applyTogether(batch: readonly Decoded[]): Promise<void> {
    const { db, metrics } = this.options;
    const applied: Envelope[] = [];
    await db.transaction(
      async (tx) => {
        const fresh = await this.recordInbox(
          tx,
          batch.map((d) => d.envelope.eventId),
        );
        const items = batch.filter((item) => fresh.has(item.envelope.eventId));
        if (this.options.handleBatch && items.length > 0) {
          await this.handleMany(tx, items, this.options.handleBatch);
        } else {
          for (const item of items) await this.handleOne(tx, item);
        }
        applied.push(...items.map((item) => item.envelope));
      },
      { commitWith: [this.checkpoint(Math.max(...batch.map((d) => d.msg.info.streamSequence)))] },
    );
    const handled = applied.length;
    if (handled > 0) this.options.afterCommit?.(applied);
    metrics?.handled.inc({ consumer: this.options.name }, handled);
    if (batch.length > handled)
      metrics?.duplicates.inc({ consumer: this.options.name }, batch.length - handled);
  }

  /** The careful path: each message in its own transaction, failures retried or dead-lettered. */
  private async applyOneByOne(batch: readonly Decoded[]): Promise<void> {
    const { db, metrics } = this.options;
    const heldBack = new Set<string>();
    for (const item of batch) {
      const { msg, envelope } = item;
      if (heldBack.has(envelope.streamId)) {
        // An earlier event of this aggregate failed; keep its successors behind it.
        msg.nak(backoffDelay(msg.info.deliveryCount, this.options.backoff));
        continue;
      }
      try {
        const applied = await db.transaction(
          async (tx) => {
            const fresh = await this.recordInbox(tx, [envelope.eventId]);
            if (fresh.size === 0) return false;
            await this.handleOne(tx, item);
            return true;
          },
          { commitWith: [this.checkpoint(msg.info.streamSequence)] },
        );
        msg.ack();
        if (applied) this.options.afterCommit?.([envelope]);
        if (applied) metrics?.handled.inc({ consumer: this.options.name });
        else metrics?.duplicates.inc({ consumer: this.options.name });
      } catch (error) {
        metrics?.handlerFailures.inc({ consumer: this.options.name, code: errorCode(error) });
        const outage = isTransientInfrastructureError(error);
        if (!outage && (!isRetryable(error) || msg.info.deliveryCount >= (this.options.maxAttempts ?? 5))) {
          await this.deadLetter(msg, error);
        } else {
          heldBack.add(envelope.streamId);
          this.options.onError?.(
            error,
            `consumer ${this.options.name}: ${envelope.type} ${envelope.eventId} failed (delivery ${msg.info.deliveryCount}); retrying`,
          );
          msg.nak(backoffDelay(msg.info.deliveryCount, this.options.backoff));
        }
      }
    }
  }

  private handleOne(tx: Tx, { msg, envelope }: Decoded): Promise<void> {
    return inSpan(
      `process ${envelope.type}`,
      {
        kind: SpanKind.CONSUMER,
        parent: extractFromHeaders(msg.headers),
        attributes: {
          [Attr.messagingSystem]: AttrValue.messagingSystemNats,
          [Attr.messagingOperationType]: AttrValue.operationType.process,
          [Attr.messagingDestination]: msg.subject,
          [Attr.messagingMessageId]: envelope.eventId,
          [Attr.consumer]: this.options.name,
          [Attr.eventId]: envelope.eventId,
          [Attr.eventType]: envelope.type,
          [Attr.streamId]: envelope.streamId,
          [Attr.streamVersion]: envelope.streamVersion,
          [Attr.deliveryAttempt]: msg.info.deliveryCount,
        },
      },
      () =>
        this.options.handle
          ? this.options.handle(envelope, {
              tx,
              subject: msg.subject,
              streamSequence: msg.info.streamSequence,
              deliveryCount: msg.info.deliveryCount,
            })
          : this.options.handleBatch!([envelope], { tx }),
    );
  }

  /** One span for the batch, linked to each message's producer span (their traces stay reachable). */
  private handleMany(tx: Tx, items: readonly Decoded[], handleBatch: BatchHandler): Promise<void> {
    return inSpan(
      `process batch`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          [Attr.messagingSystem]: AttrValue.messagingSystemNats,
          [Attr.messagingOperationType]: AttrValue.operationType.process,
          [Attr.consumer]: this.options.name,
          [Attr.messagingBatchSize]: items.length,
        },
        links: items.flatMap((item) => {
          const context = trace.getSpanContext(extractFromHeaders(item.msg.headers));
          return context ? [{ context }] : [];
        }),
      },
      () =>
        handleBatch(
          items.map((item) => item.envelope),
          { tx },
        ),
    );
  }

  /**
   * Inserts inbox rows; returns the event ids that were not there yet. The transaction's first
   * statement, without parameters (values inlined), so that it travels with BEGIN in one round trip.
   */
  private async recordInbox(tx: Tx, eventIds: readonly string[]): Promise<Set<string>> {
    const rows = await tx.query<{ event_id: string }>(
      `INSERT INTO "${tx.schema}".inbox (consumer, event_id)
       SELECT ${sqlLiteral(this.options.name)}, unnest(${sqlArrayLiteral(eventIds, 'uuid')})
       ON CONFLICT DO NOTHING RETURNING event_id`,
    );
    return new Set(rows.map((r) => r.event_id));
  }

  /** The checkpoint's upsert, sent with the transaction's COMMIT (values inlined: no parameters). */
  private checkpoint(streamSequence: number): string {
    return `INSERT INTO "${this.options.db.schema}".checkpoints (consumer, stream_sequence)
       VALUES (${sqlLiteral(this.options.name)}, ${sqlLiteral(streamSequence)})
       ON CONFLICT (consumer) DO UPDATE SET stream_sequence = GREATEST(checkpoints.stream_sequence, EXCLUDED.stream_sequence), updated_at = now()`;
  }

  /** Publishes the message to the dead-letter stream with the reason, then terminates it. */
  private async deadLetter(msg: JsMsg, error: unknown): Promise<void> {
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : String(error);
    const originalType = msg.headers?.get(Headers.type) || null;
    const envelope = buildEnvelope(
      MessageDeadLettered,
      {
        consumer: this.options.name,
        originalSubject: msg.subject,
        originalStreamSequence: msg.info.streamSequence,
        deliveries: msg.info.deliveryCount,
        errorCode: code.slice(0, 128),
        errorMessage: message.slice(0, 4096),
        originalBody: Buffer.from(msg.data).toString('base64'),
        originalType: originalType === null ? null : originalType.slice(0, 256),
      },
      { streamId: `dlq-${this.options.name}` },
    );
    const hdrs = natsHeaders();
    hdrs.set(Headers.type, envelope.type);
    hdrs.set(Headers.version, String(envelope.version));
    hdrs.set(Headers.deadLetterReason, code);
    try {
      await this.options.js.publish(
        MessageDeadLettered.subject({ consumer: this.options.name }, this.prefix),
        JSON.stringify(envelope),
        {
          // One dead letter per original message, however often this is retried.
          msgID: `dlq:${this.options.name}:${msg.info.stream}:${msg.info.streamSequence}`,
          headers: hdrs,
        },
      );
    } catch (publishError) {
      // Not lost: without a dead letter we must not drop the original; let it come back.
      this.options.onError?.(
        publishError,
        `consumer ${this.options.name}: dead-letter publish failed; will retry`,
      );
      msg.nak(backoffDelay(msg.info.deliveryCount, this.options.backoff));
      return;
    }
    // No reason text: servers before 2.10.4 do not parse `+TERM <reason>`; the dead letter has it.
    msg.term();
    this.options.metrics?.deadLettered.inc({ consumer: this.options.name, code });
    this.options.onError?.(
      error,
      `consumer ${this.options.name}: dead-lettered ${msg.subject} seq ${msg.info.streamSequence} after ${msg.info.deliveryCount} deliveries`,
    );
  }
}

/** The body as JSON; bytes that are not JSON become an `UndecodableMessageError`. */
const decodeJson = (msg: JsMsg): unknown => {
  try {
    return msg.json();
  } catch (error) {
    throw new UndecodableMessageError(`message on ${msg.subject} is not JSON`, { cause: error });
  }
};
