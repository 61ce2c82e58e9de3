import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { headers, MsgHdrsImpl } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import {
  contextFromRecord,
  extractTraceContext,
  injectTraceContext,
  SpanKind,
  traceContextToRecord,
  TraceHeaders,
  withSpan,
} from '../src';
import { spanNamed, useTestTelemetry } from './helpers';

const { telemetry, spans } = useTestTelemetry('propagation-test');

/** Encodes headers as NATS writes them on the wire and decodes them as the receiving client does. */
const overTheWire = (hdrs: MsgHdrsImpl) => MsgHdrsImpl.decode(hdrs.encode());

describe('trace context in NATS headers', () => {
  it('continues the publisher’s trace in the consumer, through the wire encoding', async () => {
    const tracer = telemetry().tracer;
    const wire = await withSpan(tracer, 'publish job.placed', { kind: SpanKind.PRODUCER }, () =>
      overTheWire(injectTraceContext(headers()) as MsgHdrsImpl),
    );
    await withSpan(
      tracer,
      'process job.placed',
      { kind: SpanKind.CONSUMER, parent: extractTraceContext(wire) },
      () => undefined,
    );
    const producer = spanNamed(spans(), 'publish job.placed');
    const consumer = spanNamed(spans(), 'process job.placed');
    expect(consumer.spanContext().traceId).toBe(producer.spanContext().traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    expect(consumer.parentSpanContext?.isRemote).toBe(true);
  });

  it('writes a W3C traceparent for the given context, sampled flag included', () => {
    const span = telemetry().tracer.startSpan('explicit');
    const hdrs = injectTraceContext(headers(), trace.setSpan(ROOT_CONTEXT, span));
    span.end();
    const { traceId, spanId } = span.spanContext();
    expect(hdrs.get(TraceHeaders.traceparent)).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('keeps tracestate across the hop', () => {
    const hdrs = headers();
    hdrs.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    hdrs.set('tracestate', 'gpunet=abc,vendor=1');
    const out = injectTraceContext(headers(), extractTraceContext(hdrs));
    expect(out.get('tracestate')).toBe('gpunet=abc,vendor=1');
    expect(out.get('traceparent')).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  });

  it('reads header names in any case', () => {
    const hdrs = headers();
    hdrs.set('Traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const sc = trace.getSpanContext(extractTraceContext(hdrs));
    expect(sc?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(sc?.traceFlags).toBe(TraceFlags.SAMPLED);
  });

  it.each([
    ['no headers at all', undefined],
    ['headers without trace context', headers()],
    [
      'a malformed traceparent',
      (() => {
        const h = headers();
        h.set('traceparent', '00-not-a-trace-01');
        return h;
      })(),
    ],
  ])('starts from the root context when a message carries %s', (_name, hdrs) => {
    expect(extractTraceContext(hdrs)).toBe(ROOT_CONTEXT);
  });

  it('writes nothing outside a span', () => {
    expect(injectTraceContext(headers(), ROOT_CONTEXT).keys()).toEqual([]);
  });
});

describe('trace context in a stored record', () => {
  it('survives a JSON round trip through a metadata column and restores the parent', async () => {
    const tracer = telemetry().tracer;
    const stored = await withSpan(tracer, 'decide PlaceJob', {}, () =>
      JSON.stringify({ traceContext: traceContextToRecord() }),
    );
    const row = JSON.parse(stored) as { traceContext: Record<string, unknown> };
    // Later, in the outbox relay: no span is active, the record is all that is left of the request.
    expect(trace.getActiveSpan()).toBeUndefined();
    await withSpan(
      tracer,
      'relay job.placed',
      { parent: contextFromRecord(row.traceContext) },
      () => undefined,
    );
    const decide = spanNamed(spans(), 'decide PlaceJob');
    const relay = spanNamed(spans(), 'relay job.placed');
    expect(relay.spanContext().traceId).toBe(decide.spanContext().traceId);
    expect(relay.parentSpanContext?.spanId).toBe(decide.spanContext().spanId);
  });

  it('holds exactly traceparent (and tracestate when there is one)', () => {
    const span = telemetry().tracer.startSpan('recorded');
    const record = traceContextToRecord(trace.setSpan(context.active(), span));
    span.end();
    expect(Object.keys(record)).toEqual(['traceparent']);
    expect(record.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });

  it('is empty outside a span', () => {
    expect(traceContextToRecord(ROOT_CONTEXT)).toEqual({});
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['an old row without trace fields', { correlationId: 'c-1' }],
    ['a non-string traceparent', { traceparent: 42 }],
    ['a malformed traceparent', { traceparent: 'garbage' }],
  ])('restores nothing from %s', (_name, record) => {
    const restored = contextFromRecord(record);
    expect(restored).toBe(ROOT_CONTEXT);
    expect(trace.getSpanContext(restored)).toBeUndefined();
  });

  it('feeds NATS headers from a stored record (the outbox relay’s path)', () => {
    const record = {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'a=1',
    };
    const hdrs = injectTraceContext(headers(), contextFromRecord(record));
    expect(hdrs.get('traceparent')).toBe(record.traceparent);
    expect(hdrs.get('tracestate')).toBe('a=1');
  });
});
