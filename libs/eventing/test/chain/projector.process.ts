/**
 * The counter projector as its own process (a Nest application with its own schema): JetStream →
 * durable consumer → Postgres projection. Exits once EXPECTED events are projected, writing its spans.
 */
import 'reflect-metadata';
import { initTelemetry } from '@gpunet/telemetry';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Database, EVENTING, type EventingRuntime } from '../../src';
import { auditSummary, createAuditProjection } from '../fixtures/projection';
import { bootOnTransport } from '../boot';
import { CounterProjectorModule } from './counter.app';
import { dumpSpans, env } from './spans';

const main = async (): Promise<void> => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'counter-projector', exporter });
  // The projection's tables exist before its consumer starts (a service's migrations would make them).
  const setup = await new Database({ url: env('DATABASE_URL'), schema: env('SCHEMA') }).open();
  await createAuditProjection(setup);
  await setup.close();
  const { app } = await bootOnTransport(CounterProjectorModule);
  const { db } = app.get<EventingRuntime>(EVENTING);
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
