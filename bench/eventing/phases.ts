/** One phase of bench/eventing in its own process; prints one JSON line with its result. */
import { randomBytes } from 'node:crypto';
import {
  buildEnvelope,
  createRegistry,
  defineEvent,
  defineStream,
  namespacedStream,
} from '@gpunet/contracts';
import {
  connectNats,
  Database,
  DurableConsumer,
  ensureStreams,
  type NatsHandle,
  OutboxRelay,
  PostgresEventStore,
} from '@gpunet/eventing';
import { AckPolicy } from '@nats-io/jetstream';
import pg from 'pg';
import { z } from 'zod';

const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const [phase = 'raw', eventsArg = '20000', rateArg = '1000', secondsArg = '5'] = process.argv.slice(2);
const N = Number(eventsArg);
/** Concurrent appenders (requests in flight in the producing service). */
const WRITERS = Number(process.env['BENCH_WRITERS'] ?? '16');
const id = randomBytes(4).toString('hex');
const prefix = `bench_${id}`;

const BenchStream = defineStream({
  name: 'BENCH',
  subjects: ['bench.>'],
  description: 'bench',
  maxAgeMs: 3600_000,
});
const JobProgressed = defineEvent({
  type: 'bench.job-progressed',
  version: 1,
  subject: 'bench.job.progressed.v1',
  stream: BenchStream.name,
  description: 'a realistic small event',
  schema: z.strictObject({
    jobId: z.string(),
    step: z.int(),
    loss: z.number(),
    provider: z.string(),
    gpus: z.array(z.string()),
  }),
});
const registry = createRegistry([JobProgressed]);
const payload = (i: number) => ({
  jobId: `job-${i % 64}`,
  step: i,
  loss: 1 / (i + 1),
  provider: 'provider-7',
  gpus: ['GPU-0a1b2c3d', 'GPU-4e5f6071'],
});

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;
const report = (r: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ phase, peakRssMb: peakRssMb(), ...r })}\n`);

const cleanup = async (nats: NatsHandle, schemas: string[]) => {
  for await (const name of nats.jsm.streams.names())
    if (name.startsWith(prefix)) await nats.jsm.streams.delete(name);
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
};

const raw = async (): Promise<void> => {
  const nats = await connectNats({ servers: NATS_URL, name: 'bench-raw' });
  await ensureStreams(nats.jsm, [BenchStream], prefix);
  const streamName = namespacedStream(BenchStream, prefix).name;
  await nats.jsm.consumers.add(streamName, {
    durable_name: 'raw',
    ack_policy: AckPolicy.Explicit,
    max_ack_pending: 4096,
  });
  const subject = JobProgressed.subject(undefined, prefix);
  const bodies = Array.from({ length: N }, (_, i) =>
    JSON.stringify(buildEnvelope(JobProgressed, payload(i), { streamId: `job-${i % 64}` })),
  );
  const consumer = await nats.js.consumers.get(streamName, 'raw');
  const started = performance.now();
  let received = 0;
  const done = new Promise<void>((resolve) => {
    void consumer.consume({
      max_messages: 1024,
      callback: (m) => {
        JSON.parse(m.string());
        m.ack();
        if (++received === N) resolve();
      },
    });
  });
  // The relay's publishing pattern: windows of pipelined publishes, each with a message id.
  for (let i = 0; i < N; i += 256) {
    await Promise.all(
      bodies.slice(i, i + 256).map((b, j) => nats.js.publish(subject, b, { msgID: `${id}-${i + j}` })),
    );
  }
  await done;
  const seconds = (performance.now() - started) / 1000;
  report({ events: N, seconds, eventsPerSecond: N / seconds });
  await cleanup(nats, []);
  await nats.close();
  process.exit(0);
};

type Mode = 'durable' | 'durable-batch' | 'latency' | 'stages';

const pipeline = async (mode: Mode): Promise<void> => {
  const producerSchema = `${prefix}_p`;
  const projectorSchema = `${prefix}_c`;
  const producer = await new Database({
    url: DATABASE_URL,
    schema: producerSchema,
    poolSize: WRITERS + 4,
  }).open();
  const projector = await new Database({ url: DATABASE_URL, schema: projectorSchema }).open();
  await projector.query(
    `CREATE TABLE "${projectorSchema}".job_progress (job_id text PRIMARY KEY, step int NOT NULL, loss double precision NOT NULL)`,
  );
  const store = new PostgresEventStore(producer, registry, prefix);
  const nats = await connectNats({ servers: NATS_URL, name: `bench-${mode}` });
  await ensureStreams(nats.jsm, [BenchStream], prefix);
  const relay = new OutboxRelay({ db: producer, js: nats.js, channel: store.channel, batchSize: 512 });
  const appendStarted = new Map<string, number>();
  const latencies: number[] = [];
  let committed = 0;
  let allCommitted: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allCommitted = resolve));
  const total = mode === 'latency' ? Number(rateArg) * Number(secondsArg) : N;
  const consumer = new DurableConsumer({
    name: 'bench-projection',
    stream: BenchStream,
    messages: [JobProgressed],
    registry,
    db: projector,
    ...nats,
    prefix,
    batchSize: 256,
    maxAckPending: 4096,
    ...(mode === 'durable-batch' || mode === 'latency'
      ? {
          // A projection's bulk path: one upsert per batch (last write per job wins, as in stream order).
          handleBatch: async (
            envelopes: readonly { data: unknown }[],
            { tx }: { tx: { schema: string; query: (sql: string, p: unknown[]) => Promise<unknown> } },
          ) => {
            const latest = new Map<string, ReturnType<typeof payload>>();
            for (const e of envelopes) {
              const d = e.data as ReturnType<typeof payload>;
              latest.set(d.jobId, d);
            }
            const rows = [...latest.values()];
            await tx.query(
              `INSERT INTO "${tx.schema}".job_progress SELECT * FROM unnest($1::text[], $2::int[], $3::float8[])
               ON CONFLICT (job_id) DO UPDATE SET step = EXCLUDED.step, loss = EXCLUDED.loss`,
              [rows.map((r) => r.jobId), rows.map((r) => r.step), rows.map((r) => r.loss)],
            );
          },
        }
      : {
          handle: async (
            envelope: { data: unknown },
            { tx }: { tx: { schema: string; query: (sql: string, p: unknown[]) => Promise<unknown> } },
          ) => {
            const d = envelope.data as ReturnType<typeof payload>;
            await tx.query(
              `INSERT INTO "${tx.schema}".job_progress VALUES ($1, $2, $3) ON CONFLICT (job_id) DO UPDATE SET step = EXCLUDED.step, loss = EXCLUDED.loss`,
              [d.jobId, d.step, d.loss],
            );
          },
        }),
    afterCommit: (applied) => {
      const now = performance.now();
      for (const e of applied) {
        const t = appendStarted.get(e.eventId);
        if (t !== undefined) latencies.push(now - t);
      }
      committed += applied.length;
      if (committed >= total) allCommitted();
    },
  });
  if (mode === 'stages') {
    // Each stage alone, one after the other: where the pipeline's time goes.
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < total) {
          const i = next++;
          const env = buildEnvelope(JobProgressed, payload(i), { streamId: `job-${i}` });
          await store.append(`job-${i}`, [{ ...env, causationId: null }], { expectedVersion: 'no_stream' });
        }
      }),
    );
    const t1 = performance.now();
    await relay.drain();
    const t2 = performance.now();
    await consumer.start();
    await finished;
    const t3 = performance.now();
    const rate = (ms: number) => Math.round(total / (ms / 1000));
    report({
      events: total,
      seconds: (t3 - t0) / 1000,
      eventsPerSecond: total / ((t3 - t0) / 1000),
      appendPerSecond: rate(t1 - t0),
      relayPerSecond: rate(t2 - t1),
      consumePerSecond: rate(t3 - t2),
    });
    await consumer.stop();
    await cleanup(nats, [producerSchema, projectorSchema]);
    await nats.close();
    await producer.close();
    await projector.close();
    process.exit(0);
  }
  relay.start();
  await consumer.start();

  const append = async (i: number) => {
    const env = buildEnvelope(JobProgressed, payload(i), { streamId: `job-${i}` });
    appendStarted.set(env.eventId, performance.now());
    await store.append(`job-${i}`, [{ ...env, causationId: null }], { expectedVersion: 'no_stream' });
  };

  const started = performance.now();
  if (mode === 'durable' || mode === 'durable-batch') {
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < total) await append(next++);
      }),
    );
  } else {
    // Open loop at a fixed rate: an append starts every 1/rate s whether or not earlier ones finished.
    const interval = 1000 / Number(rateArg);
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      inflight.push(append(i));
    }
    await Promise.all(inflight);
  }
  await finished;
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  report({
    events: total,
    seconds,
    eventsPerSecond: total / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1),
  });
  await consumer.stop();
  await relay.stop();
  await cleanup(nats, [producerSchema, projectorSchema]);
  await nats.close();
  await producer.close();
  await projector.close();
  process.exit(0);
};

const main = phase === 'raw' ? raw : () => pipeline(phase as Mode);
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
