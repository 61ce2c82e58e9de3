/*
 * What can go wrong in a request, by failure mode. Each class sets `name`, a literal `code` and the
 * HTTP status it stands for; the gateway's one exception filter (`problem.filter.ts`) turns them into
 * RFC 9457 problem+json. Branch on `code`, never on the message.
 */

/** One field at fault: its path in the request (`body.allocations.trainer.resources.gpus.count`). */
export interface FieldIssue {
  readonly path: string;
  readonly message: string;
  readonly code?: string;
  /** 1-based, in the submitted document (ensemble specs only). */
  readonly line?: number;
  readonly column?: number;
}

export abstract class GatewayError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  /** A short, fixed summary of the problem type (RFC 9457 `title`). */
  abstract readonly title: string;
  /** Fields at fault, when the request is what is wrong. */
  readonly errors: readonly FieldIssue[] = [];
}

export class RequestValidationError extends GatewayError {
  override readonly name = 'RequestValidationError';
  readonly code = 'INVALID_REQUEST' as const;
  readonly status = 400;
  readonly title = 'The request is invalid';
  constructor(
    override readonly errors: readonly FieldIssue[],
    message = `invalid request: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
  ) {
    super(message);
  }
}

export class InvalidSpecError extends GatewayError {
  override readonly name = 'InvalidSpecError';
  readonly code = 'INVALID_SPEC' as const;
  readonly status = 400;
  readonly title = 'The ensemble spec is invalid';
  constructor(override readonly errors: readonly FieldIssue[]) {
    super(
      `the ensemble spec has ${errors.length} error${errors.length === 1 ? '' : 's'}: ${errors
        .slice(0, 5)
        .map(
          (e) =>
            `${e.path === '' ? '(document)' : e.path}${e.line === undefined ? '' : ` (${e.line}:${e.column ?? 0})`}: ${e.message}`,
        )
        .join('; ')}`,
    );
  }
}

export class UnauthenticatedError extends GatewayError {
  override readonly name = 'UnauthenticatedError';
  readonly code = 'UNAUTHENTICATED' as const;
  readonly status = 401;
  readonly title = 'Authentication required';
}

export class ForbiddenError extends GatewayError {
  override readonly name = 'ForbiddenError';
  readonly code = 'FORBIDDEN' as const;
  readonly status = 403;
  readonly title = 'The API key lacks a scope';
}

export class NotFoundError extends GatewayError {
  override readonly name = 'NotFoundError';
  readonly code = 'NOT_FOUND' as const;
  readonly status = 404;
  readonly title = 'Not found';
}

export class ConflictError extends GatewayError {
  override readonly name = 'ConflictError';
  readonly code = 'CONFLICT' as const;
  readonly status = 409;
  readonly title = 'The resource is not in a state that allows this';
}

export class PayloadTooLargeError extends GatewayError {
  override readonly name = 'PayloadTooLargeError';
  readonly code = 'PAYLOAD_TOO_LARGE' as const;
  readonly status = 413;
  readonly title = 'The request body is too large';
}

export class UnsupportedMediaTypeError extends GatewayError {
  override readonly name = 'UnsupportedMediaTypeError';
  readonly code = 'UNSUPPORTED_MEDIA_TYPE' as const;
  readonly status = 415;
  readonly title = 'Unsupported content type';
}

export class IdempotencyKeyReusedError extends GatewayError {
  override readonly name = 'IdempotencyKeyReusedError';
  readonly code = 'IDEMPOTENCY_KEY_REUSED' as const;
  readonly status = 422;
  readonly title = 'The Idempotency-Key was used with a different request';
}

export class RateLimitedError extends GatewayError {
  override readonly name = 'RateLimitedError';
  readonly code = 'RATE_LIMITED' as const;
  readonly status = 429;
  readonly title = 'Too many requests';
  constructor(readonly retryAfterSeconds: number) {
    super(`rate limit exceeded; retry after ${retryAfterSeconds} s`);
  }
}

export class UpstreamUnavailableError extends GatewayError {
  override readonly name = 'UpstreamUnavailableError';
  readonly code = 'UPSTREAM_UNAVAILABLE' as const;
  readonly status = 503;
  readonly title = 'A service the gateway asks is unavailable';
}

export const isGatewayError = (e: unknown): e is GatewayError => e instanceof GatewayError;
