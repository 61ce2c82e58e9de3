import {
  buildEnvelope,
  EdgeRanksStream,
  edgeIdOfSubject,
  executionStreams,
  namespacedStream,
  type PayloadOf,
  providerStreams,
  type RankLogChunk,
  RankStartReplySchema,
  RankStatusReported,
  ReservationReplySchema,
  ReserveOnEdge,
  StartRankOnEdge,
  StopRanksOnEdge,
  StopRanksReplySchema,
  verifyEdgeReport,
} from '@gpunet/contracts';
import { ensureStreams } from '@gpunet/eventing';
import {
  EventCollector,
  type NatsServerProcess,
  type NatsTestContext,
  startNatsServer,
  testNamespace,
  useNats,
  waitFor,
} from '@gpunet/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeAgent } from '../src/app/edge-agent';
import { detect } from '../src/infra/detect/detector';
import { createIdentity, loadIdentity } from '../src/infra/identity.store';
import { StateStore } from '../src/infra/state.store';
import { DEFAULT_RANK_PATH } from '../src/infra/runtime/process.runtime';
import { FIXTURES } from './support/fixtures';

type Status = PayloadOf<typeof RankStatusReported>;
type Chunk = PayloadOf<typeof RankLogChunk>;

const H100 = join(FIXTURES, 'simulated', 'h100-node.inventory.yaml');
// No availability windows and nothing kept back: the real clock and a 2-core CI machine accept it.
const POLICY = `version: 1
name: rank-test
gpus: { share: all, max_per_job: 2 }
cpu: { reserve_cores: 0 }
memory: { reserve: 0GiB }
images: { allow: ['nvcr.io/nvidia/'] }
pricing: { asset: USDC, default_per_gpu_hour: '0.40' }
subnets: [public]
jobs: { max_duration: 1h }
`;
const MiB = 1024 ** 2;
const REPO = join(import.meta.dirname, '..', '..', '..');

/** Is the process gone (or a zombie nobody reaped yet)? */
const gone = async (pid: number): Promise<boolean> => {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
};

describe('the edge runs ranks as processes', () => {
  let nats: NatsTestContext;
  const statuses = new EventCollector<Status>('rank statuses');
  /** The statuses' envelopes: what chain each belongs to, and what caused it. */
  const statusCauses = new EventCollector<{
    jobId: string;
    correlationId: string;
    causationId: string | null;
  }>('rank status causes');
  const chunks = new EventCollector<Chunk>('log chunks');
  /** Every status's signature check (null: it verified). */
  const signatureChecks: (string | null)[] = [];
  const dirs: string[] = [];
  const agents: EdgeAgent[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_ranks' });
    await ensureStreams(await nats.jsm(), [...providerStreams, ...executionStreams], nats.prefix);
    nats.nc.subscribe(`${nats.prefix}.edge.*.rank-status.v2`, {
      callback: (_e, m) => {
        const envelope = m.json<{ data: Status; correlationId: string; causationId: string | null }>();
        signatureChecks.push(
          verifyEdgeReport(RankStatusReported, edgeIdOfSubject(m.subject, nats.prefix), envelope.data),
        );
        statuses.push(envelope.data);
        statusCauses.push({
          jobId: envelope.data.jobId,
          correlationId: envelope.correlationId,
          causationId: envelope.causationId,
        });
      },
    });
    nats.nc.subscribe(`${nats.prefix}.edge.*.log.*.v1`, {
      callback: (_e, m) => chunks.push(m.json<{ data: Chunk }>().data),
    });
    await nats.nc.flush();
  }, 30_000);

  afterAll(async () => {
    for (const a of agents) await a.stop({ flushTimeoutMs: 500 }).catch(() => undefined);
    for (const c of children) c.kill('SIGKILL');
    await nats?.cleanup();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }, 60_000);

  const edgeDir = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-edge-ranks-'));
    dirs.push(dir);
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    return dir;
  };

  const agentIn = async (dir: string, identityExists = false, jobFiles?: string): Promise<EdgeAgent> => {
    const identity = identityExists ? await loadIdentity(dir) : await createIdentity(dir);
    const agent = new EdgeAgent({
      identity,
      store: StateStore.in(dir),
      readPolicy: () => readFile(join(dir, 'policy.yaml'), 'utf8'),
      detect: () => detect({ workDir: dir, simulate: H100 }),
      nats: { servers: nats.servers, prefix: nats.prefix },
      heartbeatIntervalMs: 0,
      rescanIntervalMs: 0,
      publishTimeoutMs: 2_000,
      random: () => 0.5,
      ranks: {
        stopGraceMs: 500,
        logBatching: { maxDelayMs: 50, maxLines: 500, maxBufferedLines: 200 },
        ...(jobFiles === undefined ? {} : { jobFiles }),
      },
    });
    agents.push(agent);
    await agent.start();
    return agent;
  };

  const request = async (subject: string, data: unknown): Promise<unknown> =>
    (await nats.nc.request(subject, JSON.stringify(data), { timeout: 15_000 })).json();

  const reserve = async (edgeId: string, reservationId: string, jobId: string, gpuUuids: string[]) => {
    const reply = await request(
      ReserveOnEdge.subject({ edgeId }, nats.prefix),
      buildEnvelope(
        ReserveOnEdge,
        {
          reservationId,
          jobId,
          gpuUuids,
          cpuMillicores: 1_000,
          memoryBytes: 512 * MiB,
          image: null,
          maxDurationMs: 600_000,
          subnet: 'public',
          asset: 'USDC',
          pricePerGpuHourMinor: '3000000',
          holdUntil: new Date(Date.now() + 600_000).toISOString(),
        },
        { streamId: jobId },
      ),
    );
    expect(ReservationReplySchema.parse(reply)).toMatchObject({ outcome: 'accepted' });
  };

  const startCommand = (
    jobId: string,
    reservationId: string,
    over: Partial<PayloadOf<typeof StartRankOnEdge>>,
  ) =>
    buildEnvelope(
      StartRankOnEdge,
      {
        jobId,
        attempt: 1,
        reservationId,
        allocation: 'a-1',
        rank: 0,
        localRank: 0,
        worldSize: 1,
        runtime: 'process',
        image: null,
        cmd: ['/bin/sh', '-c', 'true'],
        entrypoint: null,
        env: { RANK: '0', WORLD_SIZE: '1' },
        workingDir: null,
        gpuUuids: [],
        limits: { cpuMillicores: 1_000, memoryBytes: 512 * MiB, pids: 256 },
        maxDurationMs: 600_000,
        overlay: null,
        ...over,
      },
      { streamId: jobId },
    );

  const start = async (edgeId: string, command: ReturnType<typeof startCommand>) =>
    RankStartReplySchema.parse(await request(StartRankOnEdge.subject({ edgeId }, nats.prefix), command));

  const exitOf = (jobId: string, attempt = 1, rank = 0) =>
    statuses.waitFor(
      (s) => s.jobId === jobId && s.attempt === attempt && s.rank === rank && s.state === 'exited',
      {
        timeoutMs: 30_000,
        description: `the exit of ${jobId}/${attempt}/${rank}`,
      },
    );

  const linesOf = (jobId: string, stream: 'stdout' | 'stderr') =>
    chunks.items.filter((c) => c.jobId === jobId && c.stream === stream).flatMap((c) => c.lines);

  it('starts a rank, reports it running then its exit code, ships its output, and never starts it twice', async () => {
    const agent = await agentIn(await edgeDir());
    const gpu = agent.inventory.gpus[0]!.uuid;
    await reserve(agent.edgeId, 'res-1', 'job-run', [gpu]);
    process.env['GPUNET_EDGE_TEST_SECRET'] = 's3cr3t-of-the-edge';
    const command = startCommand('job-run', 'res-1', {
      cmd: ['/bin/sh', '-c', 'echo "cwd=$(pwd)"; env; echo oops >&2; exit 3'],
      workingDir: 'out/logs',
      gpuUuids: [gpu],
    });
    const first = await start(agent.edgeId, command);
    expect(first).toMatchObject({ outcome: 'started', created: true });
    const running = await statuses.waitFor((s) => s.jobId === 'job-run' && s.state === 'running');
    expect(running).toMatchObject({ edgeId: agent.edgeId, attempt: 1, rank: 0, exitCode: null });
    const exited = await exitOf('job-run');
    expect(exited).toMatchObject({ exitCode: 3, signal: null, stopReason: null });
    // Both carry the start command's chain and name it as their cause: one correlation from the
    // job's request to its ranks.
    const causes = statusCauses.items.filter((c) => c.jobId === 'job-run');
    expect(causes).toHaveLength(2);
    for (const c of causes)
      expect(c).toEqual({
        jobId: 'job-run',
        correlationId: command.correlationId,
        causationId: command.eventId,
      });

    // Output: its own environment only (never the edge's), its GPU, in its workspace.
    await waitFor(() => linesOf('job-run', 'stderr').includes('oops'), { description: 'stderr shipped' });
    const out = linesOf('job-run', 'stdout');
    expect(out).toContain('RANK=0');
    expect(out).toContain(`PATH=${DEFAULT_RANK_PATH}`);
    expect(out).toContain(`CUDA_VISIBLE_DEVICES=${gpu}`);
    expect(out.join('\n')).not.toContain('s3cr3t-of-the-edge');
    expect(out.find((l) => l.startsWith('cwd='))).toMatch(/\/workspaces\/job-run\/rank-0\/out\/logs$/);

    // Idempotent: the same start again is answered started, created=false; nothing runs again.
    const again = await start(agent.edgeId, command);
    expect(again).toEqual({ ...first, created: false });
    expect(agent.ranks).toHaveLength(1);
    agent.heartbeat();
    expect(statuses.items.filter((s) => s.jobId === 'job-run' && s.state === 'exited')).toHaveLength(1);

    // The statuses are in the EDGE_RANKS stream, where execution consumes them.
    const info = await (
      await nats.jsm()
    ).streams.info(namespacedStream(EdgeRanksStream, nats.prefix).name, { subjects_filter: '>' });
    expect(info.state.messages).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('finds the job code of a development provider (--job-files) from the rank workspace', async () => {
    const code = await mkdtemp(join(tmpdir(), 'gpunet-job-files-'));
    dirs.push(code);
    await mkdir(join(code, 'jobs'));
    await writeFile(join(code, 'jobs', 'hello.sh'), 'echo "hello from the job files: $RANK"\n');
    const agent = await agentIn(await edgeDir(), false, code);
    const gpu = agent.inventory.gpus[0]!.uuid;
    await reserve(agent.edgeId, 'res-files', 'job-files', [gpu]);
    const started = await start(
      agent.edgeId,
      startCommand('job-files', 'res-files', { cmd: ['/bin/sh', 'jobs/hello.sh'], gpuUuids: [gpu] }),
    );
    expect(started).toMatchObject({ outcome: 'started', created: true });
    expect(await exitOf('job-files')).toMatchObject({ exitCode: 0 });
    await waitFor(() => linesOf('job-files', 'stdout').includes('hello from the job files: 0'), {
      description: 'the job file ran',
    });
  }, 60_000);

  it('rejects hostile starts with a reason and starts nothing', async () => {
    const agent = await agentIn(await edgeDir());
    const [gpu0, gpu1] = agent.inventory.gpus.map((g) => g.uuid);
    await reserve(agent.edgeId, 'res-h', 'job-h', [gpu0!]);
    const cases: [Partial<PayloadOf<typeof StartRankOnEdge>>, string, string | null][] = [
      [{ reservationId: 'res-nope' }, 'RESERVATION_UNKNOWN', 'reservationId'],
      [{ gpuUuids: [gpu1!] }, 'GPU_NOT_RESERVED', 'gpuUuids[0]'],
      [{ rank: 3, worldSize: 2 }, 'RANK_UNKNOWN', 'rank'],
      [{ maxDurationMs: 2 * 3_600_000 }, 'DURATION_TOO_LONG', 'maxDurationMs'],
      [{ cmd: ['/nonexistent/binary'] }, 'START_FAILED', 'cmd[0]'],
      [{ overlay: { interface: 'gn0', address: '10.9.0.2' } }, 'RUNTIME_UNAVAILABLE', 'overlay'],
    ];
    for (const [over, code, field] of cases) {
      const reply = await start(agent.edgeId, startCommand('job-h', 'res-h', over));
      expect(reply, code).toMatchObject({ outcome: 'rejected', reasons: [{ code, field }] });
    }
    // Off contract: `..` in the working directory, and an oversized environment.
    const bad = startCommand('job-h', 'res-h', {});
    const traversal = await request(StartRankOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix), {
      ...bad,
      data: { ...bad.data, workingDir: '../../etc' },
    });
    expect(traversal).toMatchObject({
      outcome: 'rejected',
      reasons: [{ code: 'INVALID_REQUEST', field: 'workingDir' }],
    });
    const env = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`V${i}`, 'x']));
    expect(await start(agent.edgeId, startCommand('job-h', 'res-h', { env }))).toMatchObject({
      reasons: [{ code: 'ENV_TOO_LARGE', field: 'env' }],
    });

    // A symlink an earlier attempt left in the workspace does not lead out of it.
    expect(
      await start(agent.edgeId, startCommand('job-h', 'res-h', { cmd: ['/bin/ln', '-s', '/etc', 'escape'] })),
    ).toMatchObject({ outcome: 'started' });
    expect(await exitOf('job-h')).toMatchObject({ exitCode: 0 });
    expect(
      await start(agent.edgeId, startCommand('job-h', 'res-h', { attempt: 2, workingDir: 'escape' })),
    ).toMatchObject({ outcome: 'rejected', reasons: [{ code: 'WORKING_DIR_INVALID', field: 'workingDir' }] });
    expect(agent.ranks).toHaveLength(1);
  }, 60_000);

  it('stops a process tree that ignores SIGTERM (grace, then SIGKILL), and stops at the max duration', async () => {
    const agent = await agentIn(await edgeDir());
    await reserve(agent.edgeId, 'res-s', 'job-stop', [agent.inventory.gpus[0]!.uuid]);
    const script = "trap '' TERM; sleep 1000 & echo child=$!; wait; wait";
    expect(
      await start(agent.edgeId, startCommand('job-stop', 'res-s', { cmd: ['/bin/sh', '-c', script] })),
    ).toMatchObject({
      outcome: 'started',
    });
    const line = await waitFor(() => linesOf('job-stop', 'stdout').find((l) => l.startsWith('child=')), {
      timeoutMs: 20_000,
      description: 'the rank to report its child',
    });
    const child = Number(line.slice('child='.length));
    const pid = Number(agent.ranks[0]!.runtimeId);
    const stop = buildEnvelope(
      StopRanksOnEdge,
      { jobId: 'job-stop', attempt: null, reason: 'cancelled', graceMs: 300 },
      { streamId: 'job-stop' },
    );
    const reply = StopRanksReplySchema.parse(
      await request(StopRanksOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix), stop),
    );
    expect(reply).toEqual({ jobId: 'job-stop', stopping: 1 });
    expect(await exitOf('job-stop')).toMatchObject({
      signal: 'SIGKILL',
      stopReason: 'cancelled',
      exitCode: null,
    });
    await waitFor(async () => (await gone(pid)) && (await gone(child)), {
      description: 'the whole tree gone',
    });
    // Idempotent: nothing left to stop.
    expect(
      StopRanksReplySchema.parse(
        await request(StopRanksOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix), stop),
      ),
    ).toEqual({
      jobId: 'job-stop',
      stopping: 0,
    });

    await reserve(agent.edgeId, 'res-m', 'job-max', [agent.inventory.gpus[1]!.uuid]);
    await start(
      agent.edgeId,
      startCommand('job-max', 'res-m', { cmd: ['/bin/sleep', '1000'], maxDurationMs: 1_000 }),
    );
    expect(await exitOf('job-max')).toMatchObject({ signal: 'SIGTERM', stopReason: 'max-duration' });
  }, 60_000);

  it('stops a rank silent for its progress timeout as hung (no-progress); one that keeps printing runs on', async () => {
    const agent = await agentIn(await edgeDir());
    await reserve(agent.edgeId, 'res-h', 'job-hung', [agent.inventory.gpus[0]!.uuid]);
    await reserve(agent.edgeId, 'res-t', 'job-talks', [agent.inventory.gpus[1]!.uuid]);
    // Prints, then blocks without a word, as a rank stuck in a collective does.
    await start(
      agent.edgeId,
      startCommand('job-hung', 'res-h', {
        cmd: ['/bin/sh', '-c', 'echo step 1; sleep 1000'],
        progressTimeoutMs: 1_500,
      }),
    );
    // Prints every 0.3 s for 3 s, longer than the timeout, and exits 0.
    await start(
      agent.edgeId,
      startCommand('job-talks', 'res-t', {
        cmd: ['/bin/sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10; do echo $i; sleep 0.3; done'],
        progressTimeoutMs: 1_500,
      }),
    );
    const hung = await exitOf('job-hung');
    expect(hung).toMatchObject({ signal: 'SIGTERM', stopReason: 'no-progress' });
    expect(hung.wallSeconds).toBeGreaterThanOrEqual(1.5);
    expect(hung.wallSeconds).toBeLessThan(10);
    expect(await exitOf('job-talks')).toMatchObject({ exitCode: 0, signal: null, stopReason: null });
  }, 60_000);

  it('ships a flood of output without blocking the rank, counting what it dropped', async () => {
    const agent = await agentIn(await edgeDir());
    await reserve(agent.edgeId, 'res-f', 'job-flood', [agent.inventory.gpus[0]!.uuid]);
    await start(agent.edgeId, startCommand('job-flood', 'res-f', { cmd: ['/usr/bin/seq', '1', '100000'] }));
    expect(await exitOf('job-flood')).toMatchObject({ exitCode: 0 });
    await waitFor(
      () => {
        const mine = chunks.items.filter((c) => c.jobId === 'job-flood');
        return mine.reduce((n, c) => n + c.lines.length + c.dropped, 0) === 100_000;
      },
      { timeoutMs: 20_000, description: 'every line shipped or counted as dropped' },
    );
    const mine = chunks.items.filter((c) => c.jobId === 'job-flood');
    expect(mine.map((c) => c.seq)).toEqual(mine.map((_, i) => i + 1));
    expect(mine[0]!.lines[0]).toBe('1');
  }, 60_000);

  it('after a crash of the edge, the next start kills the orphaned rank and reports it exited (edge-restart)', async () => {
    const dir = await edgeDir();
    const identity = await createIdentity(dir);
    const edge = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'services/provider-edge/src/main.ts',
        'start',
        '--dir',
        dir,
        '--simulate',
        H100,
        '--runtime',
        'process',
        '--unsafe-allow-host-processes',
        '--nats',
        String(nats.servers),
        '--prefix',
        nats.prefix,
        '--heartbeat',
        '1s',
      ],
      {
        cwd: REPO,
        env: { ...process.env, TSX_TSCONFIG_PATH: join(REPO, 'tsconfig.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(edge);
    let output = '';
    edge.stdout.on('data', (d: Buffer) => (output += d.toString()));
    edge.stderr.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(() => output.includes('edge started'), {
      timeoutMs: 45_000,
      description: `the edge to start: ${output}`,
    });
    await reserve(identity.edgeId, 'res-c', 'job-crash', ['SIM-nvidia-0']);
    const command = startCommand('job-crash', 'res-c', { cmd: ['/bin/sh', '-c', 'sleep 1000 & wait'] });
    expect(await start(identity.edgeId, command)).toMatchObject({ outcome: 'started', created: true });
    await statuses.waitFor((s) => s.jobId === 'job-crash' && s.state === 'running', { timeoutMs: 20_000 });
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as {
      ranks: { runtimeId: string }[];
    };
    const pid = Number(state.ranks[0]!.runtimeId);

    edge.kill('SIGKILL');
    await new Promise((r) => edge.once('exit', r));
    expect(await gone(pid)).toBe(false); // the rank outlived its edge (its own session)

    const agent = await agentIn(dir, true);
    await waitFor(() => gone(pid), { description: 'the orphan reaped' });
    expect(await exitOf('job-crash')).toMatchObject({ stopReason: 'edge-restart' });
    // What was started before the crash is still not started twice.
    expect(await start(agent.edgeId, command)).toMatchObject({ outcome: 'started', created: false });
    // And a graceful stop ends running ranks with reason `shutdown`.
    await start(
      agent.edgeId,
      startCommand('job-crash', 'res-c', { attempt: 2, cmd: ['/bin/sleep', '1000'] }),
    );
    await statuses.waitFor((s) => s.jobId === 'job-crash' && s.attempt === 2 && s.state === 'running');
    await agent.stop();
    expect(await exitOf('job-crash', 2)).toMatchObject({ stopReason: 'shutdown' });
  }, 120_000);

  it('signs every status it sent with its key (execution pays from them and refuses forgeries)', () => {
    expect(signatureChecks.length).toBeGreaterThan(5);
    expect(signatureChecks.filter((c) => c !== null)).toEqual([]);
  });
});

describe('rank exits survive a NATS outage', () => {
  let server: NatsServerProcess;
  const prefix = testNamespace('edge_rank_outage');
  let dir: string;

  beforeAll(async () => {
    server = await startNatsServer();
    const nc = await connect({ servers: server.url });
    await ensureStreams(await jetstreamManager(nc), [...providerStreams, ...executionStreams], prefix);
    await nc.close();
    dir = await mkdtemp(join(tmpdir(), 'gpunet-edge-outage-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
  }, 30_000);
  afterAll(async () => {
    await server?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('queues the exited status while NATS is down and delivers it when NATS returns', async () => {
    const agent = new EdgeAgent({
      identity: await createIdentity(dir),
      store: StateStore.in(dir),
      readPolicy: () => readFile(join(dir, 'policy.yaml'), 'utf8'),
      detect: () => detect({ workDir: dir, simulate: H100 }),
      nats: { servers: server.url, prefix },
      heartbeatIntervalMs: 0,
      rescanIntervalMs: 0,
      publishTimeoutMs: 1_000,
      random: () => 0.5,
    });
    await agent.start();
    try {
      const nc = await connect({ servers: server.url });
      const holdUntil = new Date(Date.now() + 600_000).toISOString();
      const reserve = buildEnvelope(
        ReserveOnEdge,
        {
          reservationId: 'res-o',
          jobId: 'job-outage',
          gpuUuids: [agent.inventory.gpus[0]!.uuid],
          cpuMillicores: 100,
          memoryBytes: 64 * MiB,
          image: null,
          maxDurationMs: 600_000,
          subnet: 'public',
          asset: 'USDC',
          pricePerGpuHourMinor: '3000000',
          holdUntil,
        },
        { streamId: 'job-outage' },
      );
      await nc.request(ReserveOnEdge.subject({ edgeId: agent.edgeId }, prefix), JSON.stringify(reserve), {
        timeout: 10_000,
      });
      const start = buildEnvelope(
        StartRankOnEdge,
        {
          jobId: 'job-outage',
          attempt: 1,
          reservationId: 'res-o',
          allocation: 'a',
          rank: 0,
          localRank: 0,
          worldSize: 1,
          runtime: 'process',
          image: null,
          // Waits for the test to let it go, then exits 7.
          cmd: ['/bin/sh', '-c', 'while [ ! -e go ]; do sleep 0.05; done; exit 7'],
          entrypoint: null,
          env: {},
          workingDir: null,
          gpuUuids: [],
          limits: { cpuMillicores: 100, memoryBytes: 64 * MiB, pids: null },
          maxDurationMs: 600_000,
          overlay: null,
        },
        { streamId: 'job-outage' },
      );
      const reply = await nc.request(
        StartRankOnEdge.subject({ edgeId: agent.edgeId }, prefix),
        JSON.stringify(start),
        {
          timeout: 10_000,
        },
      );
      expect(RankStartReplySchema.parse(reply.json())).toMatchObject({ outcome: 'started' });
      await nc.close();
      await waitFor(() => agent.pendingRankStatuses === 0, { description: 'the running status delivered' });

      await server.stop();
      await writeFile(join(dir, 'workspaces', 'job-outage', 'rank-0', 'go'), '');
      await waitFor(() => agent.ranks[0]?.state === 'exited' && agent.pendingRankStatuses >= 1, {
        timeoutMs: 20_000,
        description: 'the exit recorded and queued',
      });
      expect(agent.ranks[0]!.reported).toBe(false);
      await server.start();
      await waitFor(() => agent.ranks[0]?.reported === true, {
        timeoutMs: 30_000,
        description: 'the exit acknowledged',
      });

      const check = await connect({ servers: server.url });
      const stored = await (
        await jetstreamManager(check)
      ).streams.getMessage(namespacedStream(EdgeRanksStream, prefix).name, {
        last_by_subj: RankStatusReported.subject({ edgeId: agent.edgeId }, prefix),
      });
      expect(stored!.json<{ data: Status }>().data).toMatchObject({ state: 'exited', exitCode: 7 });
      await check.close();
    } finally {
      await agent.stop({ flushTimeoutMs: 500 });
    }
  }, 90_000);
});
