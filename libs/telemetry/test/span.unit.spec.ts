import { SpanStatusCode, trace } from '@opentelemetry/api';
import { headers } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { Attr, AttrValue, extractTraceContext, setAttributes, SpanKind, withSpan } from '../src';
import { spanNamed, useTestTelemetry } from './helpers';

const { telemetry, spans } = useTestTelemetry('span-test');

class JobNotFoundError extends Error {
  readonly code = 'JOB_NOT_FOUND' as const;
  override readonly name = 'JobNotFoundError';
}

describe('withSpan', () => {
  it('returns the function’s result and ends an OK span with its kind and attributes', async () => {
    const result = await withSpan(
      telemetry().tracer,
      'process job.placed',
      {
        kind: SpanKind.CONSUMER,
        attributes: { [Attr.messagingSystem]: AttrValue.messagingSystemNats, [Attr.jobId]: 'job-1' },
      },
      async () => {
        await Promise.resolve();
        return 42;
      },
    );
    expect(result).toBe(42);
    const span = spanNamed(spans(), 'process job.placed');
    expect(span.kind).toBe(SpanKind.CONSUMER);
    expect(span.attributes).toEqual({ [Attr.messagingSystem]: 'nats', [Attr.jobId]: 'job-1' });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.ended).toBe(true);
  });

  it('makes the span active inside the function, across awaits, so nested spans are its children', async () => {
    const tracer = telemetry().tracer;
    await withSpan(tracer, 'outer', {}, async (outer) => {
      await Promise.resolve();
      expect(trace.getActiveSpan()).toBe(outer);
      await withSpan(tracer, 'inner', {}, () => undefined);
    });
    const outer = spanNamed(spans(), 'outer');
    expect(spanNamed(spans(), 'inner').parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
  });

  it('records a thrown error, sets ERROR status and error.type from the code, ends the span, rethrows', async () => {
    const error = new JobNotFoundError('job-404 not found');
    await expect(
      withSpan(telemetry().tracer, 'load job', {}, async () => {
        await Promise.resolve();
        throw error;
      }),
    ).rejects.toBe(error);
    const span = spanNamed(spans(), 'load job');
    expect(span.ended).toBe(true);
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'job-404 not found' });
    expect(span.attributes[Attr.errorType]).toBe('JOB_NOT_FOUND');
    expect(span.events.map((e) => e.name)).toEqual(['exception']);
    expect(span.events[0]?.attributes?.['exception.type']).toBe('JOB_NOT_FOUND');
    expect(span.events[0]?.attributes?.['exception.message']).toBe('job-404 not found');
  });

  it('handles a synchronous throw of a non-Error value', async () => {
    await expect(
      withSpan(telemetry().tracer, 'odd throw', {}, () => {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- proving that odd throws are recorded
        throw 'plain string';
      }),
    ).rejects.toBe('plain string');
    const span = spanNamed(spans(), 'odd throw');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'plain string' });
    expect(span.attributes[Attr.errorType]).toBe('_OTHER');
    expect(span.ended).toBe(true);
  });

  it('uses the class name as error.type when an error has no code', async () => {
    await expect(
      withSpan(telemetry().tracer, 'type error', {}, () => Promise.reject(new TypeError('x'))),
    ).rejects.toThrow(TypeError);
    expect(spanNamed(spans(), 'type error').attributes[Attr.errorType]).toBe('TypeError');
  });

  it('starts in the given parent context instead of the active one', async () => {
    const tracer = telemetry().tracer;
    const hdrs = headers();
    hdrs.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const remote = extractTraceContext(hdrs);
    await withSpan(tracer, 'active', {}, () =>
      withSpan(tracer, 'handler', { parent: remote }, () => undefined),
    );
    const handler = spanNamed(spans(), 'handler');
    expect(handler.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(handler.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
  });

  it('setAttributes adds registered attributes to a running span', async () => {
    await withSpan(telemetry().tracer, 'placed', {}, (span) => {
      setAttributes(span, { [Attr.gpuCount]: 8, [Attr.outcome]: AttrValue.outcome.ack });
    });
    expect(spanNamed(spans(), 'placed').attributes).toEqual({ [Attr.gpuCount]: 8, [Attr.outcome]: 'ack' });
  });
});
