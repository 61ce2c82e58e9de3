/**
 * The producing side of the chain proof, as its own process: a request span → command → event store
 * → outbox → relay → JetStream. Exits once the relay has published everything, writing its spans.
 */
import { initTelemetry, SpanKind, withSpan } from '@gpunet/telemetry';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import {
  CommandHandler,
  connectNats,
  Database,
  ensureStreams,
  OutboxRelay,
  PostgresEventStore,
  systemClock,
} from '../../src';
import { counterDecider, CounterStream, counterRegistry } from '../fixtures/counter';
import { dumpSpans, env } from './spans';

const main = async (): Promise<void> => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'chain-producer', exporter });
  const db = await new Database({ url: env('DATABASE_URL'), schema: env('SCHEMA') }).open();
  const store = new PostgresEventStore(db, counterRegistry, env('PREFIX'));
  const nats = await connectNats({ servers: env('NATS_URL'), name: 'chain-producer' });
  await ensureStreams(nats.jsm, [CounterStream], env('PREFIX'));
  const relay = new OutboxRelay({ db, js: nats.js, channel: store.channel });
  relay.start();
  const handler = new CommandHandler({
    store,
    registry: counterRegistry,
    decider: counterDecider,
    clock: systemClock,
  });

  await withSpan(telemetry.tracer, 'POST /counters/chain', { kind: SpanKind.SERVER }, async () => {
    await handler.handle(
      'counter-chain',
      { counterId: 'chain', by: 3, limit: 10 },
      { correlationId: 'chain-request' },
    );
  });

  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const [row] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${db.schema}".outbox`);
    if (Number(row?.n) === 0) break;
    await new Promise((r) => setTimeout(r, delay));
  }
  await relay.stop();
  await telemetry.forceFlush();
  dumpSpans(exporter, 'chain-producer', env('SPANS_FILE'));
  await nats.close();
  await db.close();
  await telemetry.shutdown();
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
