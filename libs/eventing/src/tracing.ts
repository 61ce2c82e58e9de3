import {
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/** Trace context as stored beside an event (W3C `traceparent`/`tracestate`). */
export type TraceRecord = Record<string, string>;

export const TRACER_NAME = '@gpunet/eventing';
export const tracer = () => trace.getTracer(TRACER_NAME);

/** The active trace context as a plain record, for the event store and outbox (null when none). */
export const currentTraceRecord = (ctx: Context = context.active()): TraceRecord | null => {
  const carrier: TraceRecord = {};
  propagation.inject(ctx, carrier);
  return Object.keys(carrier).length > 0 ? carrier : null;
};

/** Restores a context from a stored record. */
export const contextFromTraceRecord = (record: TraceRecord | null | undefined): Context =>
  record ? propagation.extract(context.active(), record) : context.active();

interface HeaderLike {
  get(key: string): string;
  set(key: string, value: string): void;
  keys(): string[];
}

/** Copies the context into NATS headers. */
export const injectIntoHeaders = (hdrs: HeaderLike, ctx: Context = context.active()): void => {
  propagation.inject(ctx, hdrs, { set: (carrier, key, value) => carrier.set(key, value) });
};

/** Reads the context from NATS headers. */
export const extractFromHeaders = (hdrs: HeaderLike | undefined): Context =>
  hdrs === undefined
    ? context.active()
    : propagation.extract(context.active(), hdrs, {
        get: (carrier, key) => carrier.get(key) || undefined,
        keys: (carrier) => carrier.keys(),
      });

/** Runs `fn` in a new span; records a thrown error on it; always ends it. */
export const inSpan = async <T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Record<string, string | number | boolean>; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> =>
  tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );

export { SpanKind };
