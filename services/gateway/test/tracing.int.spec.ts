import { initTelemetry, type Telemetry } from '@gpunet/telemetry';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayHarness, startHarness } from './support/harness';
import { VALID_SPEC_YAML } from './support/fixtures';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

describe('gateway tracing (NATS + Postgres)', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  let h: GatewayHarness;
  let key: string;

  beforeAll(async () => {
    // The gateway's own name: runService's initTelemetry then returns this handle, exporter and all.
    telemetry = initTelemetry({ serviceName: 'gateway', exporter });
    h = await startHarness('gateway_tracing');
    key = await h.keyFor('tenant-trace', ['read', 'submit'], 'ai');
  });
  afterAll(async () => {
    await h?.close();
    await telemetry?.shutdown();
  });

  const spansNamed = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);

  it('a request continues the caller’s trace: its server span is the caller’s child, and the events it appends carry it', async () => {
    exporter.reset();
    const res = await fetch(`${h.url}/v1/jobs`, {
      method: 'POST',
      body: VALID_SPEC_YAML,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/yaml', traceparent },
    });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };
    const [span] = spansNamed('POST /v1/jobs');
    expect(span?.spanContext().traceId).toBe(TRACE_ID);
    expect(span?.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(span?.attributes).toMatchObject({ 'http.route': '/v1/jobs', 'http.response.status_code': 202 });
    const { rows } = await h.pg.pool.query<{ trace: { traceparent: string } | null }>(
      `SELECT trace FROM "${h.pg.schema}".events WHERE stream_id = $1`,
      [`job-${jobId}`],
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows)
      expect(row.trace?.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
  });

  it('refused and failing requests are spans too: 401 before the route, 404 from it, recorded as failures', async () => {
    exporter.reset();
    const unauthenticated = await fetch(`${h.url}/v1/jobs`, { headers: { traceparent } });
    expect(unauthenticated.status).toBe(401);
    const missing = await fetch(`${h.url}/v1/jobs/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: `Bearer ${key}`, traceparent },
    });
    expect(missing.status).toBe(404);
    const [refused] = spansNamed('GET /v1/jobs');
    expect(refused?.spanContext().traceId).toBe(TRACE_ID);
    expect(refused?.attributes['http.response.status_code']).toBe(401);
    expect(refused?.events.map((e) => e.name)).toContain('exception');
    const [notFound] = spansNamed('GET /v1/jobs/:jobId');
    expect(notFound?.attributes['http.response.status_code']).toBe(404);
    expect(notFound?.status.code).toBe(2); // SpanStatusCode.ERROR
  });
});
