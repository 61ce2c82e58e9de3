import {
  Attr,
  AttrValue,
  type Context,
  contextFromRecord,
  extractTraceContext,
  injectTraceContext,
  type Span,
  type SpanAttributes,
  SpanKind,
  traceContextToRecord,
  withSpan,
} from '@gpunet/telemetry';
import type { MsgHdrs } from '@nats-io/nats-core';
import { type Link, trace } from '@opentelemetry/api';

/** Trace context as stored beside an event and in the outbox (W3C `traceparent`/`tracestate`). */
export type TraceRecord = Readonly<Record<string, string>>;

const tracer = () => trace.getTracer('@gpunet/eventing');

/** The active trace context as a storable record, or null when there is no active trace. */
export const currentTraceRecord = (): TraceRecord | null => {
  const record = traceContextToRecord();
  return record.traceparent === undefined ? null : (record as TraceRecord);
};

export const contextFromTraceRecord = (record: TraceRecord | null | undefined): Context =>
  contextFromRecord(record);
export const injectIntoHeaders = (hdrs: MsgHdrs): void => void injectTraceContext(hdrs);
export const extractFromHeaders = (hdrs: MsgHdrs | undefined): Context => extractTraceContext(hdrs);

/** Runs `fn` in a span of the eventing tracer (see `withSpan`). */
export const inSpan = <T>(
  name: string,
  options: { kind?: SpanKind; attributes?: SpanAttributes; parent?: Context; links?: readonly Link[] },
  fn: (span: Span) => Promise<T>,
): Promise<T> => withSpan(tracer(), name, options, fn);

export { Attr, AttrValue, SpanKind };
