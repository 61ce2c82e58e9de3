/**
 * The counter service as its own process (a Nest application): a request span → command → event
 * store → outbox → relay → JetStream. Exits once the relay has published everything, writing its spans.
 */
import 'reflect-metadata';
import { initTelemetry, SpanKind, withSpan } from '@gpunet/telemetry';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { EVENTING, type EventingRuntime } from '../../src';
import { bootOnTransport } from '../boot';
import { CounterCommands, CounterServiceModule } from './counter.app';
import { dumpSpans, env } from './spans';

const main = async (): Promise<void> => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'counter-service', exporter });
  const { app } = await bootOnTransport(CounterServiceModule);
  const commands = app.get(CounterCommands);
  const { db } = app.get<EventingRuntime>(EVENTING);

  await withSpan(telemetry.tracer, 'POST /counters/chain', { kind: SpanKind.SERVER }, () =>
    commands.increment('chain', 3, 'chain-request'),
  );

  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const [row] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${db.schema}".outbox`);
    if (Number(row?.n) === 0) break;
    await new Promise((r) => setTimeout(r, delay));
  }
  await app.close();
  await telemetry.forceFlush();
  dumpSpans(exporter, 'counter-service', env('SPANS_FILE'));
  await telemetry.shutdown();
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
