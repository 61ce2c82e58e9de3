import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect as tcpConnect } from 'node:net';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import {
  buildEnvelope,
  type Envelope,
  GpuBenchmarked,
  LinkMeasured,
  type MessageDefinition,
  streamIdOf,
} from '@gpunet/contracts';
import { connectNats, type NatsHandle } from '@gpunet/eventing';
import { type Distribution, distribution } from './stats';
import { removeBenchState } from '../support/bench-cleanup';

/**
 * The scheduler's projection of benchmarking's measurements, on real NATS JetStream and Postgres,
 * each figure beside a baseline measured in the same run:
 *
 * - apply: `link.measured` and `gpu.benchmarked` events with benchmarking's envelopes, published on
 *   the BENCHMARKING stream, consumed by the scheduler service itself (its `scheduler-measurements`
 *   durable consumer, `MeasurementsHandler`, the upserts of `measurements.repository.ts`) in its
 *   own process (services/scheduler/bench/projection.phases.ts). A flood of `events` (256
 *   publishes in flight) gives events/s, wall and consumer-process CPU per event, from the first
 *   publish to the commit of the last; `paced` more at `rate` events/s (open loop) give the commit
 *   latency from each event's due time to its commit. Half the flood re-measures pairs (profiles)
 *   of the other half, so both the insert and the newer-wins update run. The baseline: a process
 *   with the same transport, registry and stream whose durable consumer's handlers do nothing (the
 *   inbox, checkpoint and commit without the projection's statements);
 * - load: the placement round's one statement (`loadMeasurements`) for K candidates, over a
 *   projection holding a measured matrix of `providers` providers (network.ts's shape), beside the
 *   same round trip with the same array parameter and no table read.
 *
 * Each consuming process reports its peak RSS. Needs NATS (NATS_URL) and Postgres (DATABASE_URL);
 * defaults: the local ones. Unique stream prefixes and schemas, removed at the end.
 */
export interface ProjectionBenchOptions {
  readonly events: number;
  readonly paced: number;
  /** Events per second of the paced run. */
  readonly rate: number;
  /** Providers of the measured matrix the load query reads. */
  readonly providers: number;
  readonly candidates: readonly number[];
  /** Timed loads per candidate count. */
  readonly runs: number;
  readonly log?: (line: string) => void;
}

export interface ApplyCost {
  readonly consumer: 'scheduler' | 'noop';
  readonly event: 'link.measured' | 'gpu.benchmarked';
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  /** Wall ms per event over the flood (1 / throughput). */
  readonly wallMsPerEvent: number;
  /** The consuming process's CPU ms per event over the flood. */
  readonly cpuMsPerEvent: number;
  /** Due time → commit at `rate` events/s, ms. */
  readonly commitLatencyMs: Distribution;
}

export interface LoadCost {
  readonly candidates: number;
  readonly runs: number;
  readonly rows: { readonly profiles: number; readonly links: number; readonly coordinates: number };
  readonly loadMs: { readonly p50: number; readonly p99: number };
  readonly baselineMs: { readonly p50: number; readonly p99: number };
}

export type ProjectionBenchResult =
  | { readonly status: 'skipped'; readonly reason: string }
  | {
      readonly status: 'measured';
      readonly apply: readonly ApplyCost[];
      /** Peak RSS of each consuming process, MiB. */
      readonly peakRssMiB: { readonly scheduler: number; readonly noop: number };
      readonly matrix: { readonly providers: number; readonly links: number };
      readonly load: readonly LoadCost[];
    };

const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const ROOT = resolve(import.meta.dirname, '../..');
const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const DAY = 86_400_000;

const now = (): number => performance.timeOrigin + performance.now();

/** Whether a TCP connection to `url`'s host and port opens within a second. */
const reachable = (url: string, defaultPort: number): Promise<boolean> => {
  const u = new URL(url);
  return new Promise((done) => {
    const socket = tcpConnect({ host: u.hostname, port: Number(u.port || defaultPort) });
    const end = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1_000, () => end(false));
    socket.once('connect', () => end(true));
    socket.once('error', () => end(false));
  });
};

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** Edge id number `i` (`U` and 55 base-32 characters), as benchmarking names providers. */
export const edgeIdOf = (i: number): string => {
  let s = '';
  for (let n = i; n > 0; n = Math.floor(n / 32)) s = BASE32[n % 32]! + s;
  return `U${s.padStart(55, 'A')}`;
};

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Link measurement `i` of a run: pairs among 64 providers (offset by `base` so runs do not
 * collide), pair `i mod half` — the second half re-measures the first half's pairs, newer.
 */
const linkEvent = (i: number, half: number, base: number): Envelope => {
  const pair = (i % half) % (64 * 63);
  const a = Math.floor(pair / 63);
  const b = (a + 1 + (pair % 63)) % 64;
  const at = T0 + i;
  const near = Math.floor(a / 8) === Math.floor(b / 8);
  return buildEnvelope(
    LinkMeasured,
    {
      a: edgeIdOf(base + a),
      b: edgeIdOf(base + b),
      rttUs: near ? 300 : 20_000 + (i % 97) * 1_000,
      // Probes transfer to some peers per cycle: a third of the measurements are RTT-only.
      throughputBitsPerSecond: i % 3 === 0 ? null : near ? 9e9 : 1e9,
      sameSite: near,
      path: 'direct',
      measuredAt: iso(at),
      expiresAt: iso(at + 6 * 3_600_000),
    },
    { streamId: streamIdOf('benchmarking-links', edgeIdOf(base + a)) },
  );
};

/** Profile `i` of a run: provider `base + i mod half`, 8 GPUs; the second half newer profiles. */
const profileEvent = (i: number, half: number, base: number): Envelope => {
  const providerId = edgeIdOf(base + (i % half));
  const at = T0 + i;
  return buildEnvelope(
    GpuBenchmarked,
    {
      providerId,
      requestId: `bench-${i}`,
      reason: 'initial',
      simulated: false,
      at: iso(at),
      profile: {
        profileVersion: 1,
        profileId: `profile-${i}`,
        kind: 'gpu',
        runner: {
          name: 'gpu-bench',
          version: '1',
          python: null,
          torch: null,
          backend: 'cuda 12.4',
          threads: null,
        },
        measuredAt: iso(at),
        expiresAt: iso(at + 7 * DAY),
        durationMs: 60_000,
        devices: Array.from({ length: 8 }, (_, index) => ({
          index,
          uuid: `GPU-${i}-${index}`,
          name: 'NVIDIA H100 80GB HBM3',
          kind: 'cuda' as const,
          memoryBytes: 80e9,
          matmulTflops: { fp32: 50, tf32: 350, fp16: 700 + (i % 50), bf16: 700 },
          memoryBandwidthGBps: 3000,
          hostToDeviceGBps: 50,
          deviceToHostGBps: 50,
        })),
        peers: [{ a: 0, b: 1, GBps: 350, p2p: true }],
        notes: [],
      },
    },
    { streamId: streamIdOf('benchmarking-provider', providerId) },
  );
};

/** The consuming process, spoken to one JSON line at a time (projection.phases.ts). */
class Consumer {
  private readonly lines: AsyncIterator<string>;
  private constructor(private readonly child: ChildProcess) {
    this.lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  static async start(mode: 'scheduler' | 'noop', prefix: string, schema: string): Promise<Consumer> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(ROOT, 'services/scheduler/bench/projection.phases.ts'), mode],
      {
        cwd: ROOT,
        env: { ...process.env, BENCH_PREFIX: prefix, BENCH_SCHEMA: schema, DATABASE_URL, NATS_URL },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const c = new Consumer(child);
    await c.next('ready');
    return c;
  }

  async next<T>(what: string): Promise<T> {
    const line = await this.lines.next();
    if (line.done) throw new Error(`the consuming process ended before it said ${what}`);
    return JSON.parse(line.value) as T;
  }

  send(command: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  async exit(): Promise<number> {
    this.send({ exit: true });
    const { peakRssMiB } = await this.next<{ peakRssMiB: number }>('its peak RSS');
    await once(this.child, 'exit');
    return peakRssMiB;
  }
}

interface Applied {
  readonly cpuMs: number;
  readonly commits: readonly [string, number][];
}

/** Publishes `envelopes` (`window` in flight, or one every 1/`rate` s) and waits for their commits. */
const run = async (
  nats: NatsHandle,
  consumer: Consumer,
  def: MessageDefinition,
  prefix: string,
  envelopes: readonly Envelope[],
  pace: { window: number } | { rate: number },
): Promise<{ started: number; due: Map<string, number>; applied: Applied }> => {
  consumer.send({ expect: envelopes.length });
  await consumer.next('armed');
  const subject = def.subject(undefined, prefix);
  const bodies = envelopes.map((e) => JSON.stringify(e));
  const due = new Map<string, number>();
  const started = now();
  if ('window' in pace) {
    let next = 0;
    await Promise.all(
      Array.from({ length: pace.window }, async () => {
        while (next < envelopes.length) {
          const i = next++;
          due.set(envelopes[i]!.eventId, now());
          await nats.js.publish(subject, bodies[i], { msgID: envelopes[i]!.eventId });
        }
      }),
    );
  } else {
    // Open loop: event i is due at started + i / rate whether or not earlier ones were acknowledged,
    // and its latency counts from then (a late publish is the pipeline's delay too).
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < envelopes.length; i++) {
      const at = started + (i * 1000) / pace.rate;
      const wait = at - now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      due.set(envelopes[i]!.eventId, at);
      inflight.push(nats.js.publish(subject, bodies[i], { msgID: envelopes[i]!.eventId }));
    }
    await Promise.all(inflight);
  }
  const applied = await consumer.next<Applied>('its commits');
  return { started, due, applied };
};

const measureApply = async (
  nats: NatsHandle,
  mode: 'scheduler' | 'noop',
  prefix: string,
  schema: string,
  o: ProjectionBenchOptions,
): Promise<{ apply: ApplyCost[]; consumer: Consumer }> => {
  const consumer = await Consumer.start(mode, prefix, schema);
  // Warm-up: the consumer is live (the scheduler's runs once it holds the placer lease), its code
  // compiled and its statements planned before anything is timed.
  await run(
    nats,
    consumer,
    LinkMeasured,
    prefix,
    Array.from({ length: 200 }, (_, i) => linkEvent(i, 100, 10_000)),
    { window: 64 },
  );
  await run(
    nats,
    consumer,
    GpuBenchmarked,
    prefix,
    Array.from({ length: 100 }, (_, i) => profileEvent(i, 50, 10_000)),
    { window: 64 },
  );
  const apply: ApplyCost[] = [];
  const kinds = [
    ['link.measured', LinkMeasured, linkEvent],
    ['gpu.benchmarked', GpuBenchmarked, profileEvent],
  ] as const;
  for (const [name, def, make] of kinds) {
    const half = Math.max(1, Math.floor(o.events / 2));
    const flood = await run(
      nats,
      consumer,
      def,
      prefix,
      Array.from({ length: o.events }, (_, i) => make(i, half, 0)),
      { window: 256 },
    );
    const last = Math.max(...flood.applied.commits.map(([, at]) => at));
    const seconds = (last - flood.started) / 1000;
    const paced = await run(
      nats,
      consumer,
      def,
      prefix,
      Array.from({ length: o.paced }, (_, i) => make(o.events + i, o.paced, 1_000)),
      { rate: o.rate },
    );
    const latency = paced.applied.commits.map(([id, at]) => at - paced.due.get(id)!);
    const cost: ApplyCost = {
      consumer: mode,
      event: name,
      events: o.events,
      seconds,
      eventsPerSecond: o.events / seconds,
      wallMsPerEvent: (seconds * 1000) / o.events,
      cpuMsPerEvent: flood.applied.cpuMs / o.events,
      commitLatencyMs: distribution(latency),
    };
    o.log?.(
      `  ${mode.padEnd(9)} ${name.padEnd(15)} ${cost.eventsPerSecond.toFixed(0).padStart(6)} ev/s, ` +
        `${cost.wallMsPerEvent.toFixed(3)} ms wall and ${cost.cpuMsPerEvent.toFixed(3)} ms CPU per event; ` +
        `commit p50 ${cost.commitLatencyMs.p50.toFixed(1)} ms, p99 ${cost.commitLatencyMs.p99.toFixed(1)} ms at ${o.rate}/s`,
    );
    apply.push(cost);
  }
  return { apply, consumer };
};

const cleanup = (nats: NatsHandle, prefix: string, schemas: readonly string[]): Promise<void> =>
  removeBenchState(nats, DATABASE_URL, prefix, schemas);

export const projectionBench = async (o: ProjectionBenchOptions): Promise<ProjectionBenchResult> => {
  const [natsUp, pgUp] = await Promise.all([reachable(NATS_URL, 4222), reachable(DATABASE_URL, 5432)]);
  if (!natsUp || !pgUp)
    return {
      status: 'skipped',
      reason: [
        natsUp ? null : `NATS not reachable at ${NATS_URL}`,
        pgUp ? null : `Postgres not reachable at ${DATABASE_URL}`,
      ]
        .filter((r) => r !== null)
        .join('; '),
    };
  const id = randomBytes(4).toString('hex');
  const prefix = `bench_proj_${id}`;
  const schemas = { noop: `bench_proj_${id}_noop`, scheduler: `bench_proj_${id}_sched` };
  const nats = await connectNats({ servers: NATS_URL, name: 'bench-projection' });
  try {
    // The baseline first and the scheduler after, each on its own stream (prefix) and schema.
    const noop = await measureApply(nats, 'noop', `${prefix}_n`, schemas.noop, o);
    const noopRss = await noop.consumer.exit();
    const scheduler = await measureApply(nats, 'scheduler', `${prefix}_s`, schemas.scheduler, o);
    scheduler.consumer.send({ load: { providers: o.providers, runs: o.runs, candidates: o.candidates } });
    const loaded = await scheduler.consumer.next<{ providers: number; links: number; cases: LoadCost[] }>(
      'its loads',
    );
    for (const c of loaded.cases)
      o.log?.(
        `  load for ${String(c.candidates).padStart(6)} candidates (${c.rows.links} links): ` +
          `p50 ${c.loadMs.p50.toFixed(2)} ms, p99 ${c.loadMs.p99.toFixed(2)} ms; ` +
          `the bare round trip p50 ${c.baselineMs.p50.toFixed(2)} ms, p99 ${c.baselineMs.p99.toFixed(2)} ms`,
      );
    const schedulerRss = await scheduler.consumer.exit();
    return {
      status: 'measured',
      apply: [...noop.apply, ...scheduler.apply],
      peakRssMiB: { scheduler: schedulerRss, noop: noopRss },
      matrix: { providers: loaded.providers, links: loaded.links },
      load: loaded.cases,
    };
  } finally {
    await cleanup(nats, prefix, Object.values(schemas));
    await nats.close();
  }
};
