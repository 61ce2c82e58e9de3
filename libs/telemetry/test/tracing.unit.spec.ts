import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Attr,
  initTelemetry,
  isTelemetryError,
  otlpTracesUrl,
  type Telemetry,
  TelemetryAlreadyInitializedError,
} from '../src';

let current: Telemetry | undefined;
const init = (...args: Parameters<typeof initTelemetry>) => (current = initTelemetry(...args));
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

describe('initTelemetry', () => {
  it('exports spans with the service resource to an explicit exporter', async () => {
    const exporter = new InMemorySpanExporter();
    const t = init({ serviceName: 'tracing-test-a', serviceVersion: '0.9.0', exporter });
    expect(t.exporter).toBe('custom');
    t.tracer.startSpan('one').end();
    await t.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('one');
    expect(span?.resource.attributes[Attr.serviceName]).toBe('tracing-test-a');
    expect(span?.resource.attributes[Attr.serviceVersion]).toBe('0.9.0');
  });

  it('registers the tracer provider, an async context manager and the W3C propagator globally', async () => {
    const exporter = new InMemorySpanExporter();
    const t = init({ serviceName: 'tracing-test-b', exporter });
    expect(propagation.fields()).toEqual(['traceparent', 'tracestate']);
    const outer = trace.getTracer('global').startSpan('outer');
    // The active span survives an await only with an async-hooks context manager.
    const seen = await context.with(trace.setSpan(context.active(), outer), async () => {
      await Promise.resolve();
      return trace.getActiveSpan()?.spanContext().spanId;
    });
    outer.end();
    await t.forceFlush();
    expect(seen).toBe(outer.spanContext().spanId);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['outer']);
  });

  it('returns the same handle when called again for the same service', () => {
    const first = init({ serviceName: 'tracing-test-c', exporter: new InMemorySpanExporter() });
    expect(initTelemetry({ serviceName: 'tracing-test-c' })).toBe(first);
  });

  it('refuses a second service in the same process, by error code', () => {
    init({ serviceName: 'tracing-test-d', exporter: new InMemorySpanExporter() });
    let caught: unknown;
    try {
      initTelemetry({ serviceName: 'tracing-test-other' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TelemetryAlreadyInitializedError);
    expect(isTelemetryError(caught) && caught.code).toBe('TELEMETRY_ALREADY_INITIALIZED');
  });

  it('can be initialized again after shutdown, and shutdown is idempotent', async () => {
    const first = init({ serviceName: 'tracing-test-e', exporter: new InMemorySpanExporter() });
    await first.shutdown();
    await first.shutdown();
    const exporter = new InMemorySpanExporter();
    const second = init({ serviceName: 'tracing-test-f', exporter });
    expect(second).not.toBe(first);
    trace.getTracer('x').startSpan('after-restart').end();
    await second.forceFlush();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['after-restart']);
  });

  it('creates real, propagating spans even with no exporter configured', () => {
    const t = init({ serviceName: 'tracing-test-g', env: {} });
    expect(t.exporter).toBe('none');
    const span = t.tracer.startSpan('unexported');
    expect(span.isRecording()).toBe(true);
    expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    span.end();
  });

  it('batches spans to OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set and flushes them on shutdown', async () => {
    const received: { url: string | undefined; headers: IncomingHttpHeaders; body: string }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = collector.address() as AddressInfo;
      const t = init({
        serviceName: 'tracing-test-otlp',
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/` },
      });
      expect(t.exporter).toBe('otlp');
      t.tracer.startSpan('exported-over-otlp').end();
      await t.shutdown();
      expect(received).toHaveLength(1);
      expect(received[0]?.url).toBe('/v1/traces');
      expect(received[0]?.headers['content-type']).toMatch(/application\/json/);
      expect(received[0]?.body).toContain('exported-over-otlp');
      expect(received[0]?.body).toContain('tracing-test-otlp');
    } finally {
      collector.closeAllConnections();
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
  });
});

describe('otlpTracesUrl', () => {
  it.each([
    ['no endpoint', {}, undefined],
    ['blank endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, undefined],
    ['base endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' }, 'http://otel:4318/v1/traces'],
    ['base with slash', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318/' }, 'http://otel:4318/v1/traces'],
    [
      'traces endpoint wins',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/traces' },
      'http://b/traces',
    ],
  ])('%s', (_name, env, expected) => {
    expect(otlpTracesUrl(env)).toBe(expected);
  });
});
