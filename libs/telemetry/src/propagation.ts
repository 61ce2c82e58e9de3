import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { Match, type MsgHdrs } from '@nats-io/nats-core';

/** Header names of W3C Trace Context, as the propagator writes them. */
export const TraceHeaders = {
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;

/**
 * Trace context in a form that can be stored: the event store's metadata column and the outbox keep
 * it, so that the relay that publishes an event later (another transaction, maybe another process)
 * continues the trace of the request that decided it.
 */
export interface TraceContextRecord {
  readonly traceparent?: string;
  readonly tracestate?: string;
}

const natsSetter: TextMapSetter<MsgHdrs> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

// Header names are matched ignoring case: an HTTP bridge or another client may have written
// `Traceparent`, and W3C Trace Context header names are case-insensitive.
const natsGetter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (carrier) => carrier?.keys() ?? [],
  get: (carrier, key) =>
    carrier?.has(key, Match.IgnoreCase) ? carrier.get(key, Match.IgnoreCase) : undefined,
};

type MutableRecord = { traceparent?: string; tracestate?: string };

const recordSetter: TextMapSetter<MutableRecord> = {
  set: (carrier, key, value) => {
    if (key === TraceHeaders.traceparent || key === TraceHeaders.tracestate) carrier[key] = value;
  },
};

const recordGetter: TextMapGetter<Readonly<Record<string, unknown>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

/**
 * Writes the trace context of `ctx` (default: the active context) into NATS message headers as
 * `traceparent` and `tracestate`. Does nothing when `ctx` holds no valid span context, or when
 * telemetry was never initialized (no global propagator).
 */
export function injectTraceContext(hdrs: MsgHdrs, ctx: Context = context.active()): MsgHdrs {
  propagation.inject(ctx, hdrs, natsSetter);
  return hdrs;
}

/**
 * Reads the trace context a message carries and returns a context whose remote parent is the
 * publisher's span; start the handler's span in it (`withSpan(..., { parent })`).
 *
 * The default base is the root context, not the active one: a consumer's loop runs in whatever
 * context pulled the batch, but the message's own trace is what the handler continues. A message
 * without (valid) trace headers yields `base` unchanged, so the handler starts a new trace.
 */
export function extractTraceContext(hdrs: MsgHdrs | undefined, base: Context = ROOT_CONTEXT): Context {
  return propagation.extract(base, hdrs, natsGetter);
}

/** The trace context of `ctx` (default: the active one) as a storable record; `{}` when there is none. */
export function traceContextToRecord(ctx: Context = context.active()): TraceContextRecord {
  const record: MutableRecord = {};
  propagation.inject(ctx, record, recordSetter);
  return record;
}

/**
 * The inverse of {@link traceContextToRecord}. Accepts whatever a metadata column holds (`null`, an
 * old row without trace fields, a record with other keys): anything that is not a valid trace
 * context yields `base` unchanged.
 */
export function contextFromRecord(
  record: Readonly<Record<string, unknown>> | null | undefined,
  base: Context = ROOT_CONTEXT,
): Context {
  if (record == null || typeof record !== 'object') return base;
  return propagation.extract(base, record, recordGetter);
}
