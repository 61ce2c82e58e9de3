/**
 * One phase of bench/eventing; prints one JSON line with its result.
 *
 * The producing side and the consuming side run in two processes, as two services do (the event
 * store's service and the projection's): this process appends (or, raw, publishes) and spawns
 * itself as the consumer (`consume` / `consume-raw`), which reports when it committed (acked) the
 * last message and, for each event, the time from when its append was due to its projection's
 * commit. Both processes read one clock: `performance.timeOrigin + performance.now()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import {
  buildEnvelope,
  createRegistry,
  defineEvent,
  defineStream,
  type Envelope,
  namespacedStream,
} from '@gpunet/contracts';
import {
  connectNats,
  Database,
  durable,
  ensureStreams,
  EVENTING,
  type EventBatchContext,
  type EventContext,
  EventingModule,
  type EventingRuntime,
  JetStreamTransport,
  type NatsHandle,
  OutboxRelay,
  PostgresEventStore,
  RethrowRpcFilter,
  type Tx,
} from '@gpunet/eventing';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { AckPolicy } from '@nats-io/jetstream';
import { z } from 'zod';
import { removeBenchState } from '../support/bench-cleanup';

const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const [phase = 'raw', eventsArg = '20000', rateArg = '1000', secondsArg = '5', warmupArg = '1'] =
  process.argv.slice(2);
const N = Number(eventsArg);
/**
 * Messages the producing side keeps in flight, in every phase: raw JetStream's publishes awaiting
 * their acknowledgement, the durable phases' appends awaiting their commit. A throughput is the
 * most a system sustains, so both sides are offered the same load: with 16 appends in flight
 * against 256 publishes the ratio compared the append's latency (16 / latency, Little's law) with
 * JetStream's capacity (libs/eventing/README.md, 2 December 2026).
 */
const WINDOW = 256;
/** Concurrent appenders: requests in flight in the producing service. Default: `WINDOW`. */
const WRITERS = Number(process.env['BENCH_WRITERS'] ?? String(WINDOW));
/**
 * How the projection's handlers send their upsert: `Tx.write` (not waiting for the answer: what a
 * handler that only writes should do), or with BENCH_HANDLER_AWAITS=1 (an experiment) `Tx.query`,
 * awaited: one round trip per statement, which bounds a per-message handler's consumer.
 */
const HANDLER_AWAITS = process.env['BENCH_HANDLER_AWAITS'] === '1';
const send = async (tx: Tx, sql: string, params: unknown[], statement?: string): Promise<void> => {
  if (HANDLER_AWAITS) await tx.query(sql, params, statement);
  else tx.write(sql, params, statement);
};
const prefix = process.env['BENCH_PREFIX'] ?? `bench_${randomBytes(4).toString('hex')}`;

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
    /** When the append was due (ms on the shared clock): the start of the event's latency. */
    dueAt: z.number(),
  }),
});
type Progress = z.infer<typeof JobProgressed.schema>;
const registry = createRegistry([JobProgressed]);
const payload = (i: number, dueAt: number): Progress => ({
  jobId: `job-${i % 64}`,
  step: i,
  loss: 1 / (i + 1),
  provider: 'provider-7',
  gpus: ['GPU-0a1b2c3d', 'GPU-4e5f6071'],
  dueAt,
});

/**
 * Runs `work(0)` … `work(count - 1)` with `concurrency` of them in flight: each of `concurrency`
 * workers takes the next index once its last call resolved (a closed loop, a sliding window).
 */
const closedLoop = async (
  concurrency: number,
  count: number,
  work: (i: number) => Promise<unknown>,
): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
};

/** Milliseconds on a clock both processes share. */
const now = (): number => performance.timeOrigin + performance.now();
const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;
/** This process's CPU time (user + system) in ms since `from`, a `process.cpuUsage()` reading. */
const cpuMsSince = (from: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(from);
  return (user + system) / 1000;
};
/**
 * Writes one line to stdout and resolves once it is written: stdout is a pipe here, written
 * asynchronously, and `process.exit` right after a plain `write` can cut a long line short.
 */
const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve, reject) =>
    process.stdout.write(`${JSON.stringify(value)}\n`, (error) => (error ? reject(error) : resolve())),
  );
const report = (r: Record<string, unknown>) => writeLine({ phase, peakRssMb: peakRssMb(), ...r });

const cleanup = (nats: NatsHandle, schemas: string[]) =>
  removeBenchState(nats, DATABASE_URL, prefix, schemas);

/** What the consuming process reports. */
interface ConsumerResult {
  readonly startedAt: number;
  readonly lastAt: number;
  readonly latencies?: number[];
  readonly peakRssMb: number;
  /** The consuming process's CPU ms from its go to its last commit. */
  readonly cpuMs: number;
}

/**
 * Spawns this file as the consuming process; resolves once it is ready (connected, its tables made,
 * its code loaded). `go()` lets it start consuming; `result` is its report.
 */
const startConsumer = async (
  role: 'consume' | 'consume-raw',
  env: Record<string, string>,
): Promise<{ go: () => void; result: Promise<ConsumerResult> }> => {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', import.meta.filename, role, eventsArg, rateArg, secondsArg, warmupArg],
    {
      env: { ...process.env, BENCH_PREFIX: prefix, ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const ready = await lines.next();
  if (ready.done || !String(ready.value).includes('"ready"'))
    throw new Error(`the ${role} process did not start`);
  const result = (async () => {
    const line = await lines.next();
    const [code] = (await once(child, 'exit')) as [number | null];
    if (line.done || code !== 0) throw new Error(`the ${role} process failed (exit ${code})`);
    return JSON.parse(String(line.value)) as ConsumerResult;
  })();
  return { go: () => child.stdin!.end('go\n'), result };
};

/** In the consuming process: says it is ready, then waits for the producer's go. */
const readyThenWait = async (): Promise<void> => {
  process.stdout.write('{"ready":true}\n');
  await once(createInterface({ input: process.stdin }), 'line');
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
    JSON.stringify(buildEnvelope(JobProgressed, payload(i, 0), { streamId: `job-${i % 64}` })),
  );
  const consumer = await startConsumer('consume-raw', {});
  const started = now();
  const cpu = process.cpuUsage();
  consumer.go();
  // `WINDOW` publishers, each publishing its next message once the last one was acknowledged: a
  // sliding window of pipelined publishes, each with a message id, as the durable phases' writers.
  await closedLoop(WINDOW, N, (i) => nats.js.publish(subject, bodies[i], { msgID: `${prefix}-${i}` }));
  const cpuMs = cpuMsSince(cpu);
  const result = await consumer.result;
  const seconds = (result.lastAt - started) / 1000;
  await report({
    events: N,
    seconds,
    eventsPerSecond: N / seconds,
    consumerPeakRssMb: result.peakRssMb,
    cpuMs,
    consumerCpuMs: result.cpuMs,
  });
  await cleanup(nats, []);
  await nats.close();
  process.exit(0);
};

/** The raw phase's consuming process: a pull consumer that parses and acks every message. */
const consumeRaw = async (): Promise<void> => {
  const nats = await connectNats({ servers: NATS_URL, name: 'bench-raw-consumer' });
  const consumer = await nats.js.consumers.get(namespacedStream(BenchStream, prefix).name, 'raw');
  await readyThenWait();
  const startedAt = now();
  const cpu = process.cpuUsage();
  let received = 0;
  await new Promise<void>((resolve) => {
    void consumer.consume({
      max_messages: 1024,
      callback: (m) => {
        JSON.parse(m.string());
        m.ack();
        if (++received === N) resolve();
      },
    });
  });
  const lastAt = now();
  const cpuMs = cpuMsSince(cpu);
  await nats.nc.flush();
  await writeLine({ startedAt, lastAt, cpuMs, peakRssMb: peakRssMb() });
  await nats.close();
  process.exit(0);
};

type Mode = 'durable' | 'durable-batch' | 'latency' | 'stages';

/** Events in `mode`'s run, and how many of the first are the latency phase's warm-up. */
const plan = (mode: Mode): { total: number; warmup: number } => {
  // The latency phase runs `warmupArg` seconds at the rate before it measures: connections opening,
  // plans being made and code being compiled are start-up costs, not the pipeline's steady state.
  const warmup = mode === 'latency' ? Math.round(Number(rateArg) * Number(warmupArg)) : 0;
  return { total: mode === 'latency' ? Number(rateArg) * Number(secondsArg) + warmup : N, warmup };
};

/** The projection's bulk upsert: one statement for many rows (last write per job wins). */
const upsert = (tx: Tx, rows: readonly Progress[]) =>
  send(
    tx,
    `INSERT INTO "${tx.schema}".job_progress SELECT * FROM unnest($1::text[], $2::int[], $3::float8[])
     ON CONFLICT (job_id) DO UPDATE SET step = EXCLUDED.step, loss = EXCLUDED.loss`,
    [rows.map((r) => r.jobId), rows.map((r) => r.step), rows.map((r) => r.loss)],
  );

/** The projection's consumer settings, as a service would declare them. */
const PROJECTION = { batchSize: 256, maxAckPending: 4096 } as const;

/**
 * A per-message handler: one statement per event, prepared (parsed and planned once per connection:
 * the statement name), as a service's hot handler would be; it writes without waiting for the
 * answer (`Tx.write`), so a batch's statements are pipelined.
 */
@Controller()
class ProgressHandler {
  @EventPattern(JobProgressed, durable('bench-projection', PROJECTION))
  async progressed(@Payload() d: Progress, @Ctx() ctx: EventContext): Promise<void> {
    await send(
      ctx.tx,
      `INSERT INTO "${ctx.tx.schema}".job_progress VALUES ($1, $2, $3) ON CONFLICT (job_id) DO UPDATE SET step = EXCLUDED.step, loss = EXCLUDED.loss`,
      [d.jobId, d.step, d.loss],
      'bench_progress_upsert',
    );
  }
}

/** A projection's bulk path: one upsert per consumer batch. */
@Controller()
class ProgressBatchHandler {
  @EventPattern(JobProgressed, durable('bench-projection', { ...PROJECTION, batch: true }))
  async progressed(@Payload() envelopes: readonly Envelope[], @Ctx() ctx: EventBatchContext): Promise<void> {
    const latest = new Map<string, Progress>();
    for (const e of envelopes) latest.set((e.data as Progress).jobId, e.data as Progress);
    await upsert(ctx.tx, [...latest.values()]);
  }
}

/**
 * The projection's consuming process, shaped as a service is: a Nest microservice on the JetStream
 * transport over its `EventingModule`, its handler a controller (a durable consumer writing
 * `job_progress` in Postgres). Telemetry is not initialised (as before: the tracer is a no-op).
 */
const consumeProjection = async (): Promise<void> => {
  const mode = process.env['BENCH_MODE'] as Mode;
  const { total, warmup } = plan(mode);
  const schema = `${prefix}_c`;
  const setup = await new Database({ url: DATABASE_URL, schema }).open();
  await setup.query(
    `CREATE TABLE "${schema}".job_progress (job_id text PRIMARY KEY, step int NOT NULL, loss double precision NOT NULL)`,
  );
  await setup.close();
  const latencies: number[] = [];
  let committed = 0;
  let lastAt = 0;
  let allCommitted: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allCommitted = resolve));
  @Module({
    imports: [
      EventingModule.forRoot({
        service: `bench-${mode}-consumer`,
        database: { url: DATABASE_URL, schema },
        nats: { servers: NATS_URL },
        registry,
        streams: [BenchStream],
        prefix,
        consumeAtStart: false,
      }),
    ],
    controllers: [mode === 'durable' ? ProgressHandler : ProgressBatchHandler],
  })
  class ProjectorModule {}
  const app = await NestFactory.createMicroservice(ProjectorModule, {
    logger: false,
    inject: [EVENTING],
    useFactory: (eventing: EventingRuntime) => ({
      strategy: new JetStreamTransport(eventing, {
        afterCommit: (_consumer, applied) => {
          lastAt = now();
          for (const e of applied) {
            const d = e.data as Progress;
            if (d.step >= warmup) latencies.push(lastAt - d.dueAt);
          }
          committed += applied.length;
          if (committed >= total) allCommitted();
        },
      }),
    }),
  });
  app.useLogger(false);
  app.useGlobalFilters(new RethrowRpcFilter());
  await app.listen();
  const eventing = app.get<EventingRuntime>(EVENTING);
  await readyThenWait();
  const startedAt = now();
  const cpu = process.cpuUsage();
  await eventing.startConsuming();
  await finished;
  const cpuMs = cpuMsSince(cpu);
  await writeLine({ startedAt, lastAt, cpuMs, latencies, peakRssMb: peakRssMb() });
  await app.close();
  process.exit(0);
};

const pipeline = async (mode: Mode): Promise<void> => {
  const { total, warmup } = plan(mode);
  const producerSchema = `${prefix}_p`;
  const producer = await new Database({
    url: DATABASE_URL,
    schema: producerSchema,
    // Appends share a few connections through the group commit; the relay reads on one more.
    poolSize: Math.min(WRITERS, 16) + 4,
  }).open();
  // The service default unless BENCH_APPEND_IN_FLIGHT (an experiment) says how many group commits.
  const inFlight = process.env['BENCH_APPEND_IN_FLIGHT'];
  const store = new PostgresEventStore(
    producer,
    registry,
    prefix,
    inFlight === undefined ? {} : { maxInFlight: Number(inFlight) },
  );
  const nats = await connectNats({ servers: NATS_URL, name: `bench-${mode}` });
  await ensureStreams(nats.jsm, [BenchStream], prefix);
  const relay = new OutboxRelay({ db: producer, js: nats.js, channel: store.channel, batchSize: 512 });
  const consumer = await startConsumer('consume', { BENCH_MODE: mode });
  const finish = async (r: Record<string, unknown>) => {
    await report(r);
    await relay.stop();
    await cleanup(nats, [producerSchema, `${prefix}_c`]);
    await nats.close();
    await producer.close();
    process.exit(0);
  };

  /** Appends event `i`; `dueAt`: when it should start (open loop), so that a late start counts. */
  const append = async (i: number, dueAt = now()) => {
    const env = buildEnvelope(JobProgressed, payload(i, dueAt), { streamId: `job-${i}` });
    await store.append(`job-${i}`, [{ ...env, causationId: null }], { expectedVersion: 'no_stream' });
  };
  /** `WRITERS` closed-loop appenders until `total` events are appended. */
  const appendAll = () => closedLoop(WRITERS, total, (i) => append(i));

  if (mode === 'stages') {
    // Each stage alone, one after the other: where the pipeline's time goes.
    const t0 = now();
    const cpu = process.cpuUsage();
    await appendAll();
    const t1 = now();
    await relay.drain();
    const t2 = now();
    consumer.go();
    const { lastAt, peakRssMb: consumerPeakRssMb, cpuMs: consumerCpuMs } = await consumer.result;
    const rate = (ms: number) => Math.round(total / (ms / 1000));
    await finish({
      events: total,
      seconds: (lastAt - t0) / 1000,
      eventsPerSecond: total / ((lastAt - t0) / 1000),
      appendPerSecond: rate(t1 - t0),
      relayPerSecond: rate(t2 - t1),
      consumePerSecond: rate(lastAt - t2),
      consumerPeakRssMb,
      cpuMs: cpuMsSince(cpu),
      consumerCpuMs,
    });
    return;
  }
  consumer.go();
  relay.start();
  const started = now();
  const cpu = process.cpuUsage();
  if (mode === 'durable' || mode === 'durable-batch') {
    await appendAll();
  } else {
    // Open loop at a fixed rate: an append is due every 1/rate s whether or not earlier ones
    // finished, and its latency runs from when it was due (no coordinated omission).
    const interval = 1000 / Number(rateArg);
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + i * interval;
      const wait = due - now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      inflight.push(append(i, due));
    }
    await Promise.all(inflight);
  }
  const {
    lastAt,
    latencies = [],
    peakRssMb: consumerPeakRssMb,
    cpuMs: consumerCpuMs,
  } = await consumer.result;
  const cpuMs = cpuMsSince(cpu);
  const seconds = (lastAt - started) / 1000;
  latencies.sort((a, b) => a - b);
  await finish({
    events: total,
    seconds,
    eventsPerSecond: total / seconds,
    ...(warmup > 0 ? { warmup } : {}),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1),
    consumerPeakRssMb,
    cpuMs,
    consumerCpuMs,
  });
};

const main =
  phase === 'raw'
    ? raw
    : phase === 'consume-raw'
      ? consumeRaw
      : phase === 'consume'
        ? consumeProjection
        : () => pipeline(phase as Mode);
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
