export { type BackoffPolicy, backoffDelay } from './backoff';
export { Batcher, type BatcherOptions } from './batcher';
export { type Clock, systemClock } from '@gpunet/contracts';
export {
  CommandHandler,
  type CommandHandlerOptions,
  type CommandMetadata,
  type HandledCommand,
} from './command-handler';
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
  type StoredEvent,
} from './postgres/event-store';
export { eventingMigrations } from './postgres/migrations';
export {
  type Projection,
  rebuildFromEventStore,
  rebuildFromStream,
  type RebuildProgress,
  type RebuildReport,
} from './projection';
export { askQuery, EncodedResponse, type QueryServerOptions, serveQuery } from './query/query';
export { contextFromTraceRecord, currentTraceRecord, type TraceRecord } from './tracing';
export {
  type ConsumerSpec,
  EVENTING_DATABASE,
  EVENTING_EVENT_STORE,
  EVENTING_NATS,
  EVENTING_REGISTRY,
  EVENTING_RUNTIME,
  EventingModule,
  type EventingModuleOptions,
  EventingRuntime,
} from './nest/eventing.module';
