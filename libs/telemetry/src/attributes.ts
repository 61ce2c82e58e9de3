import type { AttributeValue } from '@opentelemetry/api';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';

/**
 * Every span attribute name gpunet sets, in one place (STYLE.md: no attribute name as a string literal
 * anywhere else). OpenTelemetry semantic-convention names are used wherever one exists; the rest live
 * under `gpunet.`.
 *
 * Stable conventions are imported from `@opentelemetry/semantic-conventions`. The messaging
 * conventions are still "incubating" upstream, and OpenTelemetry asks instrumentation not to import
 * that entry point (it may break in a minor release), so they are copied here;
 * `test/attributes.unit.spec.ts` pins each copy to the upstream constant so a rename is noticed.
 */
export const Attr = {
  // --- resource -----------------------------------------------------------------------------------
  serviceName: ATTR_SERVICE_NAME,
  serviceVersion: ATTR_SERVICE_VERSION,

  // --- messaging (OpenTelemetry messaging conventions, incubating) -------------------------------
  /** Always {@link AttrValue.messagingSystemNats} for gpunet's bus. Replaces the older `messaging.system`. */
  messagingSystem: 'messaging.system.name',
  /** The NATS subject a message was published to. */
  messagingDestination: 'messaging.destination.name',
  /** The `Nats-Msg-Id` header, which is the envelope's `eventId`. */
  messagingMessageId: 'messaging.message.id',
  /** Kind of operation: one of {@link AttrValue.operationType}. Replaces the older `messaging.operation`. */
  messagingOperationType: 'messaging.operation.type',
  /** Client-specific operation name: `publish`, `ack`, `nak`, `term`, `dead-letter`. */
  messagingOperationName: 'messaging.operation.name',
  /** The envelope's `correlationId`: the conventions call the correlation id a "conversation id". */
  messagingConversationId: 'messaging.message.conversation_id',
  /** Size of the encoded payload in bytes. */
  messagingBodySize: 'messaging.message.body.size',
  /** Messages handled together by one span (a consumer's batch). */
  messagingBatchSize: 'messaging.batch.message_count',
  /** Durable JetStream consumer name: a consumer group in the conventions' terms. */
  consumer: 'messaging.consumer.group.name',

  // --- errors, HTTP, database (stable conventions) ------------------------------------------------
  /** An error's `code` when it has one, its class name otherwise; set by `withSpan` on failure. */
  errorType: ATTR_ERROR_TYPE,
  httpMethod: ATTR_HTTP_REQUEST_METHOD,
  httpRoute: ATTR_HTTP_ROUTE,
  httpStatusCode: ATTR_HTTP_RESPONSE_STATUS_CODE,
  urlPath: ATTR_URL_PATH,
  dbSystem: ATTR_DB_SYSTEM_NAME,
  dbOperation: ATTR_DB_OPERATION_NAME,
  dbCollection: ATTR_DB_COLLECTION_NAME,

  // --- gpunet envelope ------------------------------------------------------------------------------
  /** Envelope `eventId` (UUIDv7). */
  eventId: 'gpunet.event.id',
  /** Envelope `type`, e.g. `job.placed`. */
  eventType: 'gpunet.event.type',
  /** Envelope `version` (schema version of the payload). */
  eventVersion: 'gpunet.event.version',
  /** Envelope `causationId`: the event that caused this one. */
  causationId: 'gpunet.causation.id',
  /** Aggregate stream id, e.g. `job-0192…`. */
  streamId: 'gpunet.stream.id',
  /** Position of the event in its stream. */
  streamVersion: 'gpunet.stream.version',
  /** JetStream delivery attempt of the message being handled (1 = first delivery). */
  deliveryAttempt: 'gpunet.delivery.attempt',
  /** How the consumer wrapper settled a message: one of {@link AttrValue.outcome}. */
  outcome: 'gpunet.outcome',
  /** Why a message was dead-lettered. */
  deadLetterReason: 'gpunet.dead_letter.reason',

  // --- gpunet domain --------------------------------------------------------------------------------
  jobId: 'gpunet.job.id',
  providerId: 'gpunet.provider.id',
  edgeId: 'gpunet.edge.id',
  subnetId: 'gpunet.subnet.id',
  /** Rank index inside a job's gang. */
  rank: 'gpunet.rank',
  /** Number of GPUs a job or a placement asks for. */
  gpuCount: 'gpunet.gpu.count',
  /** Scheduler extension point or plugin name (`filter/gpu-count`). */
  schedulerPlugin: 'gpunet.scheduler.plugin',
  /** Reason code of an unschedulable result. */
  schedulerReason: 'gpunet.scheduler.reason',
} as const;

export type AttrKey = keyof typeof Attr;
export type AttrName = (typeof Attr)[AttrKey];

/** Span attributes keyed by registered names only: a misspelled or unregistered name is a type error. */
export type SpanAttributes = { readonly [K in AttrName]?: AttributeValue };

/** Well-known attribute values, so that callers do not spell them either. */
export const AttrValue = {
  messagingSystemNats: 'nats',
  dbSystemPostgres: 'postgresql',
  operationType: {
    /** Publishing one message. */
    send: 'send',
    /** Pulling messages from a consumer. */
    receive: 'receive',
    /** Handling one message. */
    process: 'process',
    /** Acknowledging, nak-ing or terminating a message. */
    settle: 'settle',
  },
  outcome: {
    ack: 'ack',
    nak: 'nak',
    deadLetter: 'dead-letter',
  },
} as const;
