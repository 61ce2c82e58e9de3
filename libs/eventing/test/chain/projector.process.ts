/**
 * The consuming side of the chain proof, as its own process with its own schema: JetStream →
 * durable consumer → Postgres projection. Exits once EXPECTED events are projected, writing its spans.
 */
import { initTelemetry } from '@gpunet/telemetry';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { connectNats, Database, DurableConsumer, ensureStreams } from '../../src';
import { CounterIncremented, CounterStream, counterRegistry } from '../fixtures/counter';
import { applyAudit, auditSummary, createAuditProjection } from '../fixtures/projection';
import { dumpSpans, env } from './spans';

const main = async (): Promise<void> => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'chain-projector', exporter });
  const db = await new Database({ url: env('DATABASE_URL'), schema: env('SCHEMA') }).open();
  await createAuditProjection(db);
  const nats = await connectNats({ servers: env('NATS_URL'), name: 'chain-projector' });
  await ensureStreams(nats.jsm, [CounterStream], env('PREFIX'));
  const consumer = new DurableConsumer({
    name: 'chain-projection',
    stream: CounterStream,
    messages: [CounterIncremented],
    registry: counterRegistry,
    handle: (envelope, { tx }) => applyAudit(envelope, tx),
    db,
    ...nats,
    prefix: env('PREFIX'),
  });
  await consumer.start();
  process.stdout.write('ready\n');
  const expected = Number(env('EXPECTED'));
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    if ((await auditSummary(db)).events >= expected) break;
    await new Promise((r) => setTimeout(r, delay));
  }
  await consumer.stop();
  await telemetry.forceFlush();
  dumpSpans(exporter, 'chain-projector', env('SPANS_FILE'));
  await nats.close();
  await db.close();
  await telemetry.shutdown();
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
