/**
 * Errors of the eventing library, by failure mode. Callers branch on `code` or the predicates,
 * never on message text. `retryable` tells the consumer wrapper whether a nak with backoff can help.
 */
export abstract class EventingError extends Error {
  abstract readonly code: string;
  /** Whether the same operation may succeed if simply tried again later. */
  abstract readonly retryable: boolean;
}

/** An append found the stream at another version than the caller expected. */
export class ConcurrencyError extends EventingError {
  readonly code = 'CONCURRENCY_CONFLICT' as const;
  readonly retryable = true;
  override readonly name = 'ConcurrencyError';
  constructor(
    readonly streamId: string,
    readonly expectedVersion: ExpectedVersion,
    readonly actualVersion: number,
  ) {
    super(`stream ${streamId}: expected version ${String(expectedVersion)}, found ${actualVersion}`);
  }
}

/** A request/reply query got no answer in time. */
export class QueryTimeoutError extends EventingError {
  readonly code = 'QUERY_TIMEOUT' as const;
  readonly retryable = true;
  override readonly name = 'QueryTimeoutError';
}

/** Nobody serves the query's subject (the service is down or not deployed). */
export class NoRespondersError extends EventingError {
  readonly code = 'NO_RESPONDERS' as const;
  readonly retryable = true;
  override readonly name = 'NoRespondersError';
}

/** An operation this library refuses rather than pretends to do; the message says why and what to do instead. */
export class NotSupportedError extends EventingError {
  readonly code = 'NOT_SUPPORTED' as const;
  readonly retryable = false;
  override readonly name = 'NotSupportedError';
}

/** The query's server answered with an error; `remoteCode` is the server's error code. */
export class QueryFailedError extends EventingError {
  readonly code = 'QUERY_FAILED' as const;
  override readonly name = 'QueryFailedError';
  constructor(
    readonly remoteCode: string,
    message: string,
    readonly retryable: boolean,
    readonly issues: readonly { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** A handler asks for its message to be dead-lettered at once: retrying can never help. */
export class PermanentHandlerError extends EventingError {
  readonly code: string;
  readonly retryable = false;
  override readonly name = 'PermanentHandlerError';
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A message's bytes are not a JSON document: no retry can help. */
export class UndecodableMessageError extends EventingError {
  readonly code = 'UNDECODABLE_MESSAGE' as const;
  readonly retryable = false;
  override readonly name = 'UndecodableMessageError';
}

/** `number`: the stream's current version must be exactly this; `'no_stream'`: it must not exist; `'any'`: no check. */
export type ExpectedVersion = number | 'no_stream' | 'any';

export const isConcurrencyError = (e: unknown): e is ConcurrencyError => e instanceof ConcurrencyError;
export const isEventingError = (e: unknown): e is EventingError => e instanceof EventingError;

/**
 * Whether retrying could help. Errors that say so (`retryable`) are trusted; contract violations and
 * domain errors are permanent; anything else (a database or network fault) is assumed transient.
 */
export const isRetryable = (e: unknown): boolean => {
  if (typeof e === 'object' && e !== null && 'retryable' in e && typeof e.retryable === 'boolean') {
    return e.retryable;
  }
  if (
    e instanceof Error &&
    (e.name === 'InvalidMessageError' || e.name === 'UnknownMessageTypeError' || e.name === 'DomainError')
  ) {
    return false;
  }
  return true;
};

/** A stable code for metrics and dead letters. */
export const errorCode = (e: unknown): string => {
  if (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string') return e.code;
  return e instanceof Error ? e.name : 'UNKNOWN';
};

// SQLSTATE classes and codes that say "the database is unavailable or the transaction lost a race",
// never "this message is bad": 08 connection exception, 53 insufficient resources, 57P01-57P03
// shutdown / cannot connect now, 40001 serialization failure, 40P01 deadlock.
const TRANSIENT_SQLSTATE = /^(08|53|57P0[1-3]|40001|40P01)/;
const TRANSIENT_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether the failure is the infrastructure's (database unreachable, connection lost, a
 * serialization race), not the message's. Such failures are retried for as long as they last and
 * never count towards dead-lettering: an outage must not turn healthy messages into dead letters.
 */
export const isTransientInfrastructureError = (e: unknown): boolean => {
  for (let error: unknown = e, depth = 0; error && depth < 5; depth++) {
    const candidate = error as { code?: unknown; driverError?: unknown; cause?: unknown; message?: unknown };
    if (
      typeof candidate.code === 'string' &&
      (TRANSIENT_SQLSTATE.test(candidate.code) || TRANSIENT_NODE_CODES.has(candidate.code))
    ) {
      return true;
    }
    error = candidate.driverError ?? candidate.cause;
  }
  return false;
};
