// The code in libs/telemetry/README.md is copied from this file; keep the two in step.
import { headers, type MsgHdrs } from '@nats-io/nats-core';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import {
  Attr,
  AttrValue,
  contextFromRecord,
  createLogger,
  createMetricsRegistry,
  defineCounter,
  extractTraceContext,
  initTelemetry,
  injectTraceContext,
  SpanKind,
  traceContextToRecord,
  withSpan,
} from '../src';

const exporter = new InMemorySpanExporter();
const lines: string[] = [];

// --- main.ts -----------------------------------------------------------------------------------
const telemetry = initTelemetry({ serviceName: 'scheduler', serviceVersion: '0.1.0', exporter });
const logger = createLogger({
  service: 'scheduler',
  destination: { write: (l: string) => void lines.push(l) },
});
const metrics = createMetricsRegistry({ service: 'scheduler', defaultMetrics: false });
const settled = defineCounter(metrics, {
  subsystem: 'eventing',
  name: 'messages_settled',
  help: 'Messages settled, by consumer and outcome.',
  labelNames: ['consumer', 'outcome'],
});

afterAll(() => telemetry.shutdown());

/** Stands in for a NATS message: a subject, headers and a body. */
interface Msg {
  subject: string;
  headers: MsgHdrs;
  data: string;
}

// --- publishing side: the outbox relay -----------------------------------------------------------
async function publish(row: {
  eventId: string;
  subject: string;
  metadata: Record<string, unknown>;
}): Promise<Msg> {
  return withSpan(
    telemetry.tracer,
    `send ${row.subject}`,
    {
      kind: SpanKind.PRODUCER,
      parent: contextFromRecord(row.metadata), // the request that decided the event, possibly long ago
      attributes: {
        [Attr.messagingSystem]: AttrValue.messagingSystemNats,
        [Attr.messagingDestination]: row.subject,
        [Attr.messagingMessageId]: row.eventId,
        [Attr.messagingOperationType]: AttrValue.operationType.send,
      },
    },
    () => ({ subject: row.subject, headers: injectTraceContext(headers()), data: '{}' }),
  );
}

// --- consuming side: the consumer wrapper --------------------------------------------------------
async function consume(msg: Msg, consumer: string): Promise<void> {
  await withSpan(
    telemetry.tracer,
    `process ${msg.subject}`,
    {
      kind: SpanKind.CONSUMER,
      parent: extractTraceContext(msg.headers),
      attributes: {
        [Attr.messagingSystem]: AttrValue.messagingSystemNats,
        [Attr.messagingDestination]: msg.subject,
        [Attr.consumer]: consumer,
        [Attr.messagingOperationType]: AttrValue.operationType.process,
      },
    },
    async () => {
      logger.info({ subject: msg.subject }, 'handling'); // carries trace_id and span_id
      await Promise.resolve();
      settled.inc({ consumer, outcome: AttrValue.outcome.ack });
    },
  );
}

describe('README example', () => {
  it('runs one trace from the deciding request through the outbox and NATS to the consumer', async () => {
    // --- command side: store the trace context with the event -----------------------------------
    const row = await withSpan(telemetry.tracer, 'POST /v1/jobs', { kind: SpanKind.SERVER }, () => ({
      eventId: '0192d3a4-5b6c-7d8e-9f00-112233445566',
      subject: 'job.placed.v1',
      metadata: { ...traceContextToRecord() },
    }));

    await consume(await publish(row), 'execution-jobs');

    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual([
      'POST /v1/jobs',
      'send job.placed.v1',
      'process job.placed.v1',
    ]);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const [request, send, handle] = spans;
    expect(send?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    expect(handle?.parentSpanContext?.spanId).toBe(send?.spanContext().spanId);
    expect(JSON.parse(lines[0]!)).toMatchObject({ trace_id: handle?.spanContext().traceId, msg: 'handling' });
    expect(await metrics.metrics()).toContain(
      'gpunet_eventing_messages_settled_total{consumer="execution-jobs",outcome="ack",service="scheduler"} 1',
    );
  });
});
