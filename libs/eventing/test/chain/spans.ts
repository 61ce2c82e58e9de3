import { writeFileSync } from 'node:fs';
import type { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface SpanRecord {
  name: string;
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
}

const parentOf = (span: ReadableSpan): string | undefined =>
  span.parentSpanContext?.spanId ?? (span as unknown as { parentSpanId?: string }).parentSpanId;

/** Writes the finished spans of this process to a JSON file the test reads. */
export const dumpSpans = (exporter: InMemorySpanExporter, service: string, file: string): void => {
  const spans: SpanRecord[] = exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    service,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: parentOf(s),
  }));
  writeFileSync(file, JSON.stringify(spans, null, 2));
};

export const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
