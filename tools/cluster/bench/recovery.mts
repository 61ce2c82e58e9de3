/**
 * The measurement of `bench/recovery` (its `run.ts` starts this file as a child process; it belongs
 * to the cluster tool, whose dev cluster it drives): how fast gpunet notices a failure in a running
 * job and has every rank running again, on the real control plane (every service its own process),
 * two simulated providers in their own network namespaces, and the 4-rank DDP example training
 * over Gloo.
 *
 * Three failures, `runs` times each:
 *   rank-killed    a training rank SIGKILLed: detected = `job.restarting` after the kill,
 *                  recovered = the next attempt's `job.running` (every rank running again);
 *   rank-hung      a training rank SIGSTOPped (the others block in the all-reduce), with
 *                  `failure_recovery.progress_timeout` 8 s: detected and recovered as above;
 *   provider-lost  beta's edge and its ranks SIGKILLed: detected = discovery's `provider.offline`
 *                  (liveness window 5 s, heartbeats 1 s); there is no replacement of a lost node
 *                  yet, so the job fails and "recovered" is not measured.
 * Prints p50 / p99 / max per failure beside the goals (detect < 10 s, recovered < 30 s) and writes
 * bench/recovery/results.json. Times are the control plane's event timestamps against this
 * process's clock at the kill (one machine, one clock).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Envelope, JobCancelRequested, JobSubmitted, prefixSubject } from '@gpunet/contracts';
import { type NormalizedSpec, parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { requireTestbed, Testbed } from '@gpunet/netns-testbed';
import { connectNats } from '@gpunet/eventing';
import { jetstream } from '@nats-io/jetstream';
import pg from 'pg';
// The files themselves, not the package index: its governance helpers import the test library.
import { DevCluster, publishAs } from '../src/dev-cluster';
import { openDevEconomy } from '../src/economy';
import { type SimulatedEdge, startSimulatedEdge } from '../src/edge-process';
import { NamespaceBridge } from '../src/namespace-bridge';
import { rankProcessId } from '../src/rank-process';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1 || RUNS > 100) throw new Error(`--runs: 1–100, got ${values.runs}`);

const ROOT = resolve(import.meta.dirname, '../../..');
const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const SUBNET = 'demo';
const ASSET = 'NTX';
const GPU_CLASS = 'RTX-4090';
const PRICE = 1_000_000n;
const TENANT = 'tenant-bench';
const GOALS = { detectMs: 10_000, recoveredMs: 30_000 };

if (!(await requireTestbed('bench:recovery'))) process.exit(2);

const rtxHost = (prefix: string) => `uuid_prefix: SIM-${prefix}
gpus:
  - { model: NVIDIA GeForce RTX 4090, count: 2, vram: 24GiB, compute_capability: "8.9", cuda_version: "12.4" }
host: { cpu_cores: 16, memory: 64GiB }
`;

/**
 * Polls `ready` every 50 ms until it holds, or fails after `timeoutMs` saying what it waited for.
 * (`@gpunet/testing` has one, but its index loads vitest, which a plain script cannot.)
 */
const waitFor = async <T,>(
  ready: () => T | undefined | false,
  { timeoutMs, description }: { timeoutMs: number; description: string },
): Promise<T> => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = ready();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

const PREFIX = `benchrec${randomBytes(3).toString('hex')}`;
const nats = { ...(await connectNats({ servers: NATS_URL, name: 'gpunet-bench-recovery' })), prefix: PREFIX };
/** Every event the services publish under the bench's prefix, in arrival order. */
const events = { items: [] as Envelope[] };
nats.nc.subscribe(prefixSubject(PREFIX, '>'), {
  callback: (_e, msg) => {
    try {
      const e = msg.json<Envelope>();
      if (typeof e === 'object' && e !== null && 'type' in e) events.items.push(e);
    } catch {
      // a request or a reply, not an event
    }
  },
});
const cluster = await DevCluster.start({
  databaseUrl: DATABASE_URL,
  natsUrl: NATS_URL,
  prefix: nats.prefix,
  schemaPrefix: nats.prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_'),
  services: ['settlement', 'discovery', 'scheduler', 'execution'],
  env: {
    execution: { EXECUTION_USAGE_PERIOD: '5s', EXECUTION_TICK: '500ms', EXECUTION_STOP_WAIT: '20s' },
    discovery: { LIVENESS_WINDOW: '5s', LIVENESS_SWEEP_INTERVAL: '1s' },
  },
});
const tb = await Testbed.create('benchrec');
const bridge = await NamespaceBridge.open(`benchrec-${process.pid}`, { host: '127.0.0.1', port: 4222 });
const edges: SimulatedEdge[] = [];

const cleanup = async (): Promise<void> => {
  for (const e of edges) await e.remove().catch(() => undefined);
  await bridge.close();
  await tb.destroy();
  await cluster.stop();
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  for (const schema of cluster.schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
  for await (const stream of nats.jsm.streams.list())
    if (stream.config.name.startsWith(`${PREFIX}_`)) await nats.jsm.streams.delete(stream.config.name);
  await nats.nc.close();
};

const ofJob = (jobId: string, type: string) =>
  events.items.filter((e) => e.type === type && (e.data as { jobId?: string }).jobId === jobId);
const at = (e: Envelope | undefined): number => (e ? Date.parse(e.occurredAt) : Number.NaN);

const spec = (progressTimeoutMs: number | null): NormalizedSpec => {
  const parsed = parseEnsembleSpec(
    readFileSync(join(ROOT, 'docs/examples/15-multi-provider-ddp.yaml'), 'utf8'),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const s = structuredClone(parsed.spec);
  const a = s.allocations[0]!;
  a.execution.cmd = a.execution.cmd.map((arg, i, all) => (all[i - 1] === '--steps' ? '1000000' : arg));
  a.failureRecovery = { ...a.failureRecovery, maxRestarts: RUNS + 1, progressTimeoutMs };
  return s;
};

const submit = (jobId: string, s: NormalizedSpec) =>
  publishAs(jetstream(nats.nc), nats.prefix, JobSubmitted, {
    jobId,
    tenantId: TENANT,
    subnetId: SUBNET,
    asset: ASSET,
    gpus: 4,
    gpuClasses: [GPU_CLASS],
    maxPricePerGpuHour: PRICE.toString(),
    maxDurationSeconds: Math.ceil(s.maxDurationMs / 1000),
    submittedAt: new Date().toISOString(),
    spec: s,
  });

const cancel = (jobId: string) =>
  publishAs(jetstream(nats.nc), nats.prefix, JobCancelRequested, {
    jobId,
    tenantId: TENANT,
    reason: 'bench over',
    requestedAt: new Date().toISOString(),
  });

/** Waits until `attempt` of the job runs and its rank `rank` has printed a training step. */
const training = async (jobId: string, attempt: number, rank: number): Promise<void> => {
  await waitFor(
    () =>
      events.items.some((e) => {
        if (e.type !== 'edge.rank-log') return false;
        const chunk = e.data as { jobId: string; attempt: number; rank: number; lines: string[] };
        return (
          chunk.jobId === jobId &&
          chunk.attempt === attempt &&
          chunk.rank === rank &&
          chunk.lines.some((l) => l.includes('"event": "step"'))
        );
      }),
    { timeoutMs: 180_000, description: `${jobId} attempt ${attempt} rank ${rank} training` },
  );
};

interface Sample {
  readonly detectMs: number;
  readonly recoveredMs: number | null;
}

/** Kills (or stops) a rank of each attempt in turn: `runs` restarts of one long job. */
const restartRuns = async (name: string, signal: NodeJS.Signals, progressTimeoutMs: number | null) => {
  const jobId = `bench-${name}-${Date.now()}`;
  await submit(jobId, spec(progressTimeoutMs));
  const samples: Sample[] = [];
  for (let attempt = 1; attempt <= RUNS; attempt++) {
    const rank = attempt % 4;
    await training(jobId, attempt, rank);
    const pid = rankProcessId(jobId, rank, attempt);
    if (pid === undefined)
      throw new Error(`${name}: rank ${rank} of attempt ${attempt} is not on this machine`);
    const killedAt = Date.now();
    process.kill(pid, signal);
    await waitFor(
      () => ofJob(jobId, 'job.running').some((e) => (e.data as { attempt: number }).attempt === attempt + 1),
      { timeoutMs: 120_000, description: `${name}: attempt ${attempt + 1} running` },
    );
    const restarting = ofJob(jobId, 'job.restarting').find(
      (e) => (e.data as { attempt: number }).attempt === attempt + 1,
    );
    const running = ofJob(jobId, 'job.running').find(
      (e) => (e.data as { attempt: number }).attempt === attempt + 1,
    );
    samples.push({ detectMs: at(restarting) - killedAt, recoveredMs: at(running) - killedAt });
    process.stdout.write(`[bench] ${name} ${attempt}/${RUNS}: ${JSON.stringify(samples.at(-1))}\n`);
  }
  await cancel(jobId);
  await waitFor(() => ofJob(jobId, 'job.cancelled').length > 0, {
    timeoutMs: 120_000,
    description: 'cancelled',
  });
  return samples;
};

/** What the control plane said of a job, one line an event (the ranks' own output left out). */
const story = (jobId: string): string[] =>
  events.items
    .filter(
      (e) =>
        (e.data as { jobId?: string }).jobId === jobId &&
        e.type !== 'edge.rank-log' &&
        e.type !== 'edge.rank-status',
    )
    .map((e) => `${e.occurredAt} ${e.type} ${JSON.stringify(e.data).slice(0, 300)}`);

/**
 * Kills beta's edge and ranks mid-job, `runs` times (beta restarted in between). A run whose job
 * does not train on the returned beta ends the series: what the job went through is kept.
 */
const providerLostRuns = async (): Promise<{ samples: Sample[]; stopped: string[] | null }> => {
  const beta = edges[1]!;
  const samples: Sample[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const jobId = `bench-provider-lost-${run}-${Date.now()}`;
    await submit(jobId, spec(null));
    try {
      await training(jobId, 1, 2);
    } catch {
      return { samples, stopped: [`run ${run}: the job did not train within 180 s`, ...story(jobId)] };
    }
    const onBeta = [2, 3].map((rank) => rankProcessId(jobId, rank, 1));
    const killedAt = Date.now();
    await beta.process.kill();
    for (const pid of onBeta) if (pid !== undefined) process.kill(pid, 'SIGKILL');
    const offline = await waitFor(
      () =>
        events.items.find(
          (e) =>
            e.type === 'provider.offline' &&
            (e.data as { providerId: string }).providerId === beta.edgeId &&
            Date.parse(e.occurredAt) >= killedAt,
        ),
      { timeoutMs: 60_000, description: 'beta offline' },
    );
    samples.push({ detectMs: at(offline) - killedAt, recoveredMs: null });
    process.stdout.write(`[bench] provider-lost ${run}/${RUNS}: ${JSON.stringify(samples.at(-1))}\n`);
    await waitFor(() => ofJob(jobId, 'job.failed').length > 0, {
      timeoutMs: 120_000,
      description: 'job failed',
    });
    const backAt = Date.now();
    await beta.process.start();
    await waitFor(
      () =>
        events.items.some(
          (e) =>
            e.type === 'provider.online' &&
            (e.data as { providerId: string }).providerId === beta.edgeId &&
            Date.parse(e.occurredAt) >= backAt,
        ),
      { timeoutMs: 60_000, description: 'beta online again' },
    );
    // The failed job's reservations on beta are released once it is back (execution retries the
    // release): the next run starts on a free beta.
    await waitFor(
      () =>
        events.items.some(
          (e) =>
            e.type === 'provider.reservations-changed' &&
            (e.data as { providerId: string; reservations: unknown[] }).providerId === beta.edgeId &&
            (e.data as { reservations: unknown[] }).reservations.length === 0 &&
            Date.parse(e.occurredAt) >= backAt,
        ),
      { timeoutMs: 120_000, description: "the failed job's reservations on beta released" },
    );
  }
  return { samples, stopped: null };
};

const percentile = (xs: readonly number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

try {
  const core = await tb.namespace('core');
  await tb.bridge(core, 'br0');
  for (const [i, name] of ['alpha', 'beta'].entries()) {
    const ns = await tb.namespace(name);
    await tb.link(core, `v${i}`, ns, 'eth0');
    await tb.attach(core, `v${i}`, 'br0');
    await ns.addAddress('eth0', `10.78.0.${10 + i}/24`);
    await ns.up('eth0');
    await bridge.into(ns, 4222);
    edges.push(
      await startSimulatedEdge({
        name,
        inventory: rtxHost(name),
        subnets: [SUBNET],
        natsUrl: NATS_URL,
        prefix: nats.prefix,
        netns: ns,
        extraArgs: ['--job-files', ROOT],
      }),
    );
  }
  await openDevEconomy(nats.nc, nats.prefix, {
    subnetId: SUBNET,
    asset: ASSET,
    gpuClass: GPU_CLASS,
    pricePerGpuHour: PRICE,
    tenantId: TENANT,
    tenantDeposit: 10n ** 12n,
    providerIds: edges.map((e) => e.edgeId),
  });

  // provider-lost last: after it, beta is a restarted edge.
  const killed = await restartRuns('rank-killed', 'SIGKILL', null);
  const hung = await restartRuns('rank-hung', 'SIGSTOP', 8_000);
  const lost = await providerLostRuns();
  const results = { 'rank-killed': killed, 'rank-hung': hung, 'provider-lost': lost.samples };
  if (lost.stopped) console.log(`\nprovider-lost stopped early:\n${lost.stopped.join('\n')}`);
  console.log(
    `\nfailure        runs  detect p50 / p99 / max ms      recovered p50 / p99 / max ms   goals: detect < ${GOALS.detectMs} ms, recovered < ${GOALS.recoveredMs} ms`,
  );
  for (const [name, samples] of Object.entries(results)) {
    const detect = samples.map((s) => s.detectMs);
    const recovered = samples.flatMap((s) => (s.recoveredMs === null ? [] : [s.recoveredMs]));
    const fig = (xs: number[]) =>
      xs.length === 0
        ? 'not measured (no replacement)'
        : `${percentile(xs, 50).toFixed(0)} / ${percentile(xs, 99).toFixed(0)} / ${Math.max(...xs).toFixed(0)}`;
    console.log(
      `${name.padEnd(14)} ${String(samples.length).padStart(4)}  ${fig(detect).padEnd(28)} ${fig(recovered)}`,
    );
  }
  writeFileSync(
    resolve(ROOT, 'bench/recovery/results.json'),
    JSON.stringify(
      { at: new Date().toISOString(), runs: RUNS, goals: GOALS, results, providerLostStopped: lost.stopped },
      null,
      2,
    ),
  );
} finally {
  await cleanup();
}
process.exit(0);
