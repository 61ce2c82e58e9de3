/**
 * An outbox relay in its own process, for crash tests. Env: DATABASE_URL, SCHEMA, NATS_URL, PREFIX,
 * BATCH_SIZE, and KILL_AFTER_BATCHES: when set, the process SIGKILLs itself after JetStream
 * acknowledged that many batches and before their outbox rows are deleted.
 */
import { connectNats, Database, ensureStreams, OutboxRelay, PostgresEventStore } from '../../src';
import { CounterStream, counterRegistry } from '../fixtures/counter';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

const main = async (): Promise<void> => {
  const db = await new Database({ url: env('DATABASE_URL'), schema: env('SCHEMA') }).open();
  const store = new PostgresEventStore(db, counterRegistry, env('PREFIX'));
  const nats = await connectNats({ servers: env('NATS_URL'), name: 'relay-process' });
  await ensureStreams(nats.jsm, [CounterStream], env('PREFIX'));
  const killAfter = Number(process.env['KILL_AFTER_BATCHES'] ?? '0');
  let batches = 0;
  const relay = new OutboxRelay({
    db,
    js: nats.js,
    channel: store.channel,
    batchSize: Number(process.env['BATCH_SIZE'] ?? '100'),
    afterPublish: () => {
      batches += 1;
      if (killAfter > 0 && batches >= killAfter) process.kill(process.pid, 'SIGKILL');
    },
  });
  relay.start();
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => {
    void relay
      .stop()
      .then(() => nats.close())
      .then(() => db.close())
      .then(() => process.exit(0));
  });
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
