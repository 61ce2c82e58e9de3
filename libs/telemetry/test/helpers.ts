import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { initTelemetry, type Telemetry } from '../src';

/**
 * Initializes telemetry for one test file with an in-memory exporter; spans are cleared after each
 * test and telemetry is shut down after the file, so the next file may initialize it again.
 */
export function useTestTelemetry(serviceName: string): {
  telemetry: () => Telemetry;
  spans: () => ReadableSpan[];
} {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry | undefined;
  beforeAll(() => {
    telemetry = initTelemetry({ serviceName, serviceVersion: '1.2.3', exporter });
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    await telemetry?.shutdown();
  });
  return {
    telemetry: () => {
      if (!telemetry) throw new Error('telemetry is not initialized yet');
      return telemetry;
    },
    spans: () => exporter.getFinishedSpans(),
  };
}

/** Finds the one finished span with this name. */
export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1) throw new Error(`expected one span named ${name}, found ${found.length}`);
  return found[0]!;
}
