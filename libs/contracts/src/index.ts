export { buildEnvelope, type Causation, causedBy, type EnvelopeInit, originOf } from './build';
export * from './catalog';
export { type Envelope, type EnvelopeMeta, EnvelopeMetaSchema, Headers, RawEnvelopeSchema } from './envelope';
export {
  ContractError,
  InvalidMessageError,
  InvalidSubjectTokenError,
  isContractError,
  isInvalidMessage,
  isUnknownMessageType,
  RegistryDefinitionError,
  UnknownMessageTypeError,
  type ValidationIssue,
} from './errors';
export { EventIdSchema, newEventId } from './ids';
export { formatPath, toIssues } from './issues';
export {
  defineCommand,
  defineEvent,
  type InputOf,
  type MessageDefinition,
  type MessageKind,
  type PayloadOf,
  type TypeOf,
} from './message';
export { createRegistry, defineUpcaster, type EnvelopeOf, MessageRegistry, type Upcaster } from './registry';
export { defineStream, namespacedStream, type StreamDefinition } from './stream';
export {
  assertSubjectToken,
  prefixSubject,
  renderSubject,
  type SubjectParams,
  type SubjectTokens,
  wildcardSubject,
} from './subject';
export { type Decider, type DomainEvent, DomainError, foldEvents } from './decider';
export { defineQuery, type QueryDefinition, type QueryRequest, type QueryResponse } from './query';
export { type Clock, systemClock } from './clock';
export { type StreamKind, StreamKindSchema, streamIdOf } from './stream-id';
export { edgeIdOfSubject, type SignatureFailure, verifyEdgeReport } from './signing/verify-edge-report';
