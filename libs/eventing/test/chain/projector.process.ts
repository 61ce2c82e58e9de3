/**
 * The counter projector as its own process (a Nest application with its own schema): JetStream →
 * durable consumer → Postgres projection. Exits once EXPECTED events are projected, writing its spans.
 */
import 'reflect-metadata';
import { initTelemetry } from '@gpunet/telemetry';
import { NestFactory } from '@nestjs/core';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { type Database, EVENTING_DATABASE } from '../../src';
import { auditSummary, createAuditProjection } from '../fixtures/projection';
import { CounterProjectorModule } from './counter.app';
import { dumpSpans, env } from './spans';

const main = async (): Promise<void> => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'counter-projector', exporter });
  const app = await NestFactory.createApplicationContext(CounterProjectorModule, { logger: false });
  const db = app.get<Database>(EVENTING_DATABASE);
  await createAuditProjection(db);
  await app.init();
  process.stdout.write('ready\n');
  const expected = Number(env('EXPECTED'));
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    if ((await auditSummary(db)).events >= expected) break;
    await new Promise((r) => setTimeout(r, delay));
  }
  await app.close();
  await telemetry.forceFlush();
  dumpSpans(exporter, 'counter-projector', env('SPANS_FILE'));
  await telemetry.shutdown();
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
