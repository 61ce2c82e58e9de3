/**
 * The consuming process of `bench/scheduling`'s projection section (bench/scheduling/projection.ts
 * spawns it; it belongs to the scheduler project so that it runs the scheduler's own code).
 *
 *   scheduler  the scheduler service itself (`SchedulerModule` under `runService`, as main.ts boots
 *              it): its `scheduler-measurements` consumer applies benchmarking's events to the
 *              projection (`MeasurementsHandler` → `measurements.repository.ts`), and the load of the
 *              projection for K candidates (`loadMeasurements`) is timed on its own database pool;
 *   noop       the same transport, registry and stream, with a durable consumer whose handlers do
 *              nothing: the inbox, checkpoint and commit of every message without the projection's
 *              statements — the baseline the scheduler is measured against.
 *
 * Talks over stdin/stdout, one JSON line each way: it says `ready` once booted; then for each
 * `{"expect": n}` it answers `armed`, and once its consumer committed n more messages, their commit
 * times (ms on the clock both processes share, `performance.timeOrigin + performance.now()`) and
 * the process's CPU ms since it was armed; `{"load": …}` fills the projection with a measured
 * matrix and times the load query; `{"exit": true}` reports peak RSS and ends.
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import {
  BenchmarkingStream,
  createRegistry,
  type Envelope,
  GpuBenchmarked,
  LinkMeasured,
} from '@gpunet/contracts';
import { type Database, durable, EVENTING, EventingModule, type EventingRuntime } from '@gpunet/eventing';
import { runService } from '@gpunet/service-runtime';
import { createLogger } from '@gpunet/telemetry';
import { Controller, type DynamicModule, Module } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { SchedulerModule } from '../src/app/scheduler.module';
import { loadMeasurements } from '../src/infra/measurements.repository';

const [mode = 'scheduler'] = process.argv.slice(2);
const connection = {
  databaseUrl: process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
  schema: process.env['BENCH_SCHEMA']!,
  natsUrl: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
  natsSeed: null,
  prefix: process.env['BENCH_PREFIX']!,
};
const CONSUMER = mode === 'scheduler' ? 'scheduler-measurements' : 'bench-noop';

const NOOP = durable('bench-noop');
/** The baseline consumer: the measurements' messages taken, checkpointed and committed, nothing applied. */
@Controller()
class NoopMeasurementsHandler {
  @EventPattern(GpuBenchmarked, NOOP)
  benchmarked(): void {}

  @EventPattern(LinkMeasured, NOOP)
  linkMeasured(): void {}
}

const noopModule = (): DynamicModule => {
  @Module({
    imports: [
      EventingModule.forService('bench-noop', connection, {
        registry: createRegistry([GpuBenchmarked, LinkMeasured]),
        streams: [BenchmarkingStream],
      }),
    ],
    controllers: [NoopMeasurementsHandler],
  })
  class NoopModule {}
  return { module: NoopModule };
};

const now = (): number => performance.timeOrigin + performance.now();
const write = (value: unknown): Promise<void> =>
  new Promise((resolve, reject) =>
    process.stdout.write(`${JSON.stringify(value)}\n`, (error) => (error ? reject(error) : resolve())),
  );
const cpuMsSince = (from: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(from);
  return (user + system) / 1000;
};
const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

let expected = 0;
let commits: [string, number][] = [];
let reached: () => void = () => undefined;

const quiet = createLogger({
  service: mode,
  destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
});

const boot = () =>
  runService({
    name: mode === 'scheduler' ? 'scheduler' : 'bench-noop',
    module: ({ metrics }) =>
      mode === 'scheduler'
        ? SchedulerModule.forRoot({
            config: { ...connection, reservationDeadlineMs: 5_000, holdMs: 300_000, maxAttempts: 5 },
            metrics,
          })
        : noopModule(),
    handleSignals: false,
    env: {},
    logger: quiet,
    transport: {
      afterCommit: (consumer: string, applied: readonly Envelope[]) => {
        if (consumer !== CONSUMER) return;
        const at = now();
        for (const e of applied) commits.push([e.eventId, at]);
        if (commits.length >= expected) reached();
      },
    },
  });

/**
 * A measured matrix over `providers` providers, written straight into the projection's tables (the
 * consumer's cost is measured separately): a profile of 8 GPUs and a coordinate per provider; both
 * directions of every pair inside each site of 8 providers, and of 8 more peers per provider at
 * seeded-random distance — `withMeasuredNetwork`'s shape (bench/scheduling/network.ts).
 */
const fill = async (db: Database, providers: number): Promise<number> => {
  const s = connection.schema;
  const gpus = JSON.stringify(
    Array.from({ length: 8 }, (_, i) => ({
      index: i,
      uuid: `GPU-${i}`,
      tflops: { fp32: 60, tf32: 400, fp16: 800, bf16: 800 },
      memoryBytes: 80e9,
    })),
  );
  await db.query(
    `INSERT INTO "${s}".gpu_profiles
       SELECT 'p' || i, false, $1::jsonb, '[]'::jsonb, now(), now() + interval '7 days'
       FROM generate_series(0, $2 - 1) AS i`,
    [gpus, providers],
  );
  await db.query(
    `INSERT INTO "${s}".coordinates
       SELECT 'p' || i, random() * 100, random() * 100, 1, 0.1, 's' || (i / 8), now(), now() + interval '1 day'
       FROM generate_series(0, $1 - 1) AS i`,
    [providers],
  );
  await db.query(`SELECT setseed(0.42)`);
  await db.query(
    `INSERT INTO "${s}".links
       SELECT 'p' || a, 'p' || b, CASE WHEN a / 8 = b / 8 THEN 300 ELSE 5000 + random() * 150000 END,
              CASE WHEN a / 8 = b / 8 THEN 9e9 ELSE 1e9 END, a / 8 = b / 8, false, now(), now() + interval '6 hours'
       FROM (
         SELECT a, b FROM generate_series(0, $1 - 1) AS a, generate_series(0, 7) AS k,
              LATERAL (SELECT (a / 8) * 8 + k AS b) AS site WHERE b <> a AND b < $1
         UNION
         SELECT a, b FROM (
           SELECT a, (a + 1 + floor(random() * ($1 - 1)))::int % $1 AS b
           FROM generate_series(0, $1 - 1) AS a, generate_series(1, 8) AS k) AS far
         UNION
         SELECT b, a FROM (
           SELECT a, (a + 1 + floor(random() * ($1 - 1)))::int % $1 AS b
           FROM generate_series(0, $1 - 1) AS a, generate_series(1, 8) AS k) AS back
       ) AS pairs
     ON CONFLICT DO NOTHING`,
    [providers],
  );
  await db.query(`ANALYZE "${s}".links`);
  await db.query(`ANALYZE "${s}".gpu_profiles`);
  await db.query(`ANALYZE "${s}".coordinates`);
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${s}".links`);
  return row!.n;
};

/**
 * The load of the projection for `k` candidates (the first k providers: whole sites, as discovery
 * would offer them), `runs` times, beside the same round trip with the same array parameter and no
 * table read (`SELECT cardinality($1)`): the query's own cost over the connection's.
 */
const timeLoad = async (db: Database, k: number, runs: number) => {
  const ids = Array.from({ length: k }, (_, i) => `p${i}`);
  const load: number[] = [];
  const baseline: number[] = [];
  let rows = { profiles: 0, links: 0, coordinates: 0 };
  for (let i = 0; i < runs + 3; i++) {
    let t0 = performance.now();
    const m = await loadMeasurements(db, ids);
    const ms = performance.now() - t0;
    t0 = performance.now();
    await db.query(`SELECT cardinality($1::text[]) AS n`, [ids]);
    const base = performance.now() - t0;
    // The first runs plan the statement and warm the caches: not counted.
    if (i < 3) continue;
    load.push(ms);
    baseline.push(base);
    rows = { profiles: m.profiles.size, links: m.links.length, coordinates: m.coordinates.size };
  }
  load.sort((a, b) => a - b);
  baseline.sort((a, b) => a - b);
  return {
    candidates: k,
    runs,
    rows,
    loadMs: { p50: percentile(load, 50), p99: percentile(load, 99) },
    baselineMs: { p50: percentile(baseline, 50), p99: percentile(baseline, 99) },
  };
};

const main = async (): Promise<void> => {
  const service = await boot();
  const db = service.app.get<EventingRuntime>(EVENTING).db;
  await write({ ready: true });
  for await (const line of createInterface({ input: process.stdin })) {
    const command = JSON.parse(line) as {
      expect?: number;
      load?: { providers: number; runs: number; candidates: number[] };
      exit?: true;
    };
    if (command.expect !== undefined) {
      commits = [];
      expected = command.expect;
      const done = new Promise<void>((resolve) => (reached = resolve));
      const armedAt = process.cpuUsage();
      await write({ armed: true });
      await done;
      await write({ cpuMs: cpuMsSince(armedAt), commits });
    } else if (command.load !== undefined) {
      const { providers, runs, candidates } = command.load;
      const links = await fill(db, providers);
      const cases = [];
      for (const k of candidates) cases.push(await timeLoad(db, k, runs));
      await write({ providers, links, cases });
    } else {
      await write({ peakRssMiB: process.resourceUsage().maxRSS / 1024 });
      await service.close();
      process.exit(0);
    }
  }
};

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
