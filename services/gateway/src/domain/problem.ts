import { type FieldIssue, isGatewayError } from './gateway.errors';

/** An RFC 9457 problem document, with gpunet's `code` and `errors` extensions. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance: string;
  /** The error class's code (`INVALID_SPEC`, `NOT_FOUND` …): what clients branch on. */
  readonly code: string;
  readonly errors?: readonly FieldIssue[];
}

export const PROBLEM_BASE = 'https://gpunet.io/problems/';
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const typeOf = (code: string): string => `${PROBLEM_BASE}${code.toLowerCase().replaceAll('_', '-')}`;

/** What the HTTP framework itself rejects (body parsing, limits), as plain status + message. */
export interface FrameworkError {
  readonly statusCode: number;
  readonly message: string;
  readonly code?: string;
}

const isFrameworkError = (e: unknown): e is FrameworkError =>
  typeof e === 'object' &&
  e !== null &&
  typeof (e as { statusCode?: unknown }).statusCode === 'number' &&
  typeof (e as { message?: unknown }).message === 'string';

const FRAMEWORK_CODES: Readonly<Record<number, { code: string; title: string }>> = {
  400: { code: 'INVALID_REQUEST', title: 'The request is invalid' },
  404: { code: 'NOT_FOUND', title: 'Not found' },
  405: { code: 'METHOD_NOT_ALLOWED', title: 'Method not allowed' },
  406: { code: 'NOT_ACCEPTABLE', title: 'Not acceptable' },
  413: { code: 'PAYLOAD_TOO_LARGE', title: 'The request body is too large' },
  414: { code: 'URI_TOO_LONG', title: 'The request URI is too long' },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', title: 'Unsupported content type' },
  429: { code: 'RATE_LIMITED', title: 'Too many requests' },
};

/**
 * The problem document for any error a request ended with. Gateway errors keep their status, code
 * and field issues; errors of the HTTP framework with a 4xx status keep it (a body that is not JSON
 * is the client's fault); anything else is a 500 whose detail reveals nothing internal.
 */
export const toProblem = (error: unknown, instance: string): Problem => {
  if (isGatewayError(error)) {
    return {
      type: typeOf(error.code),
      title: error.title,
      status: error.status,
      detail: error.message,
      instance,
      code: error.code,
      ...(error.errors.length > 0 ? { errors: error.errors } : {}),
    };
  }
  if (isFrameworkError(error) && error.statusCode >= 400 && error.statusCode < 500) {
    const known = FRAMEWORK_CODES[error.statusCode] ?? { code: 'BAD_REQUEST', title: 'Bad request' };
    return {
      type: typeOf(known.code),
      title: known.title,
      status: error.statusCode,
      detail: error.message,
      instance,
      code: known.code,
    };
  }
  return {
    type: typeOf('INTERNAL'),
    title: 'Internal error',
    status: 500,
    detail: 'The gateway failed to handle the request; it was logged.',
    instance,
    code: 'INTERNAL',
  };
};
