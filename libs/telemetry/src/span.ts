import {
  type Context,
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api';
import { ERROR_TYPE_VALUE_OTHER } from '@opentelemetry/semantic-conventions';
import { Attr, type SpanAttributes } from './attributes';

export interface WithSpanOptions {
  /** Default `SpanKind.INTERNAL`; `PRODUCER` when publishing, `CONSUMER` when handling a message. */
  readonly kind?: SpanKind;
  /** Attributes at start; names come from the `Attr` registry only. */
  readonly attributes?: SpanAttributes;
  /**
   * Context to start the span in: the result of `extractTraceContext(msg.headers)` or
   * `contextFromRecord(row.metadata)`. Default: the active context.
   */
  readonly parent?: Context;
  /** Links to other spans, e.g. every message of a batch that one span handles. */
  readonly links?: readonly Link[];
}

/**
 * Runs `fn` inside a new active span. The span always ends; when `fn` throws (or its promise
 * rejects) the exception is recorded, the status is ERROR, `error.type` is the error's `code` (or its
 * class name), and the same error is rethrown: telemetry observes failures, it never handles them.
 */
export async function withSpan<T>(
  tracer: Tracer,
  name: string,
  options: WithSpanOptions,
  fn: (span: Span) => T | Promise<T>,
): Promise<T> {
  const { kind = SpanKind.INTERNAL, attributes, parent = context.active(), links } = options;
  return tracer.startActiveSpan(
    name,
    { kind, ...(attributes && { attributes }), ...(links && { links: [...links] }) },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        recordFailure(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Marks `span` as failed by `error`; for spans that are not managed by {@link withSpan}. */
export function recordFailure(span: Span, error: unknown): void {
  if (error instanceof Error) {
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  } else {
    span.recordException(String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
  }
  span.setAttribute(Attr.errorType, errorType(error));
}

function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
    if (error instanceof Error) return error.name;
  }
  return ERROR_TYPE_VALUE_OTHER;
}

/** `span.setAttributes` restricted to registered names (`span.setAttribute` takes any string). */
export function setAttributes(span: Span, attributes: SpanAttributes): void {
  span.setAttributes(attributes);
}
