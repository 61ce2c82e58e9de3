export { type BackoffPolicy, backoffDelay } from './backoff';
export { Batcher, type BatcherOptions } from './batcher';
export { type Clock, systemClock } from '@gpunet/contracts';
export {
  type CommandHandlerOptions,
  type CommandInput,
  type CommandMetadata,
  CommandHandler,
  type Decision,
  type HandledCommand,
} from './command-handler';
export { Envelopes } from './envelopes';
export {
  ConcurrencyError,
  errorCode,
  EventingError,
  type ExpectedVersion,
  isConcurrencyError,
  isEventingError,
  isRetryable,
  isTransientInfrastructureError,
  NoRespondersError,
  NotSupportedError,
  PermanentHandlerError,
  QueryFailedError,
  QueryTimeoutError,
  UndecodableMessageError,
} from './errors';
export { connectNats, type NatsHandle, type NatsOptions } from './jetstream/connection';
export {
  DurableConsumer,
  type DurableConsumerOptions,
  type HandlerContext,
  type MessageHandler,
} from './jetstream/consumer';
export { ensureStreams, streamConfig } from './jetstream/streams';
export { type EventingMetrics, eventingMetrics } from './metrics';
export { OutboxRelay, type OutboxRelayOptions } from './outbox/outbox-relay';
export {
  assertSchemaName,
  Database,
  type DatabaseOptions,
  type Isolation,
  sqlArrayLiteral,
  sqlLiteral,
  type TransactionOptions,
  type Tx,
} from './postgres/database';
export {
  type AppendResult,
  enqueueOutbox,
  OutboxNotifier,
  type NewEvent,
  type OutboxMessage,
  PostgresEventStore,
  PRIVATE_EVENT_VERSION,
  type StoredEvent,
} from './postgres/event-store';
export { eventingMigrations } from './postgres/migrations';
export { schemaOf as migrationSchemaOf } from './postgres/migrations/schema';
export {
  type Projection,
  rebuildFromEventStore,
  rebuildFromStream,
  type RebuildProgress,
  type RebuildReport,
} from './projection';
export { askQuery, EncodedResponse, type QueryServerOptions, serveQuery } from './query/query';
export { contextFromTraceRecord, currentTraceRecord, type TraceRecord } from './tracing';
export { lockStream, lockStreams } from './postgres/stream-lock';
export { type Snapshot, SnapshotStore } from './postgres/snapshots';
export { EventBatchContext, EventContext, MessageContext, QueryContext } from './nest/contexts';
export { type CommandRequest, EventingClient, type EventingClientOptions } from './nest/eventing.client';
export { EVENTING, EventingModule, type EventingParts, type ServiceConnection } from './nest/eventing.module';
export { type ConsumerGate, type EventingOptions, EventingRuntime } from './nest/eventing.runtime';
export { JETSTREAM, JetStreamTransport, type JetStreamTransportOptions } from './nest/jetstream.transport';
export { type DurableSettings, durable, ephemeral, type QueryServing, served } from './nest/patterns';
export { RethrowRpcFilter } from './nest/rethrow.filter';
export { DirectHandlers } from './nest/direct-handlers';
