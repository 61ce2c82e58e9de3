import {
  buildEnvelope,
  executionStreams,
  type PayloadOf,
  providerStreams,
  type RankLogChunk,
  RankStartReplySchema,
  type RankStatusReported,
  ReservationReplySchema,
  ReserveOnEdge,
  StartRankOnEdge,
  StopRanksOnEdge,
  StopRanksReplySchema,
} from '@gpunet/contracts';
import { ensureStreams } from '@gpunet/eventing';
import { EventCollector, type NatsTestContext, requireDocker, useNats, waitFor } from '@gpunet/testing';
import Docker from 'dockerode';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeAgent } from '../src/app/edge-agent';
import { detect } from '../src/infra/detect/detector';
import { createIdentity } from '../src/infra/identity.store';
import { StateStore } from '../src/infra/state.store';
import { createDockerRuntime } from '../src/infra/runtime/docker-wiring';
import { JOB_BASE_IMAGE, LABEL } from '../src/infra/runtime/docker-sandbox';
import { removeWorkspaces } from '../src/infra/workspace';
import { FIXTURES } from './support/fixtures';
import { loopMountProblem, warnSkipped } from './support/loop';

/*
 * The whole edge with the docker runtime (what a provider runs): start commands over NATS become
 * sandboxed containers, their output and exits come back as log chunks and rank statuses — an OOM
 * kill included — and a cancel removes the container.
 */
const docker = await requireDocker('provider-edge with the docker runtime');
const noLoop = docker ? await loopMountProblem() : null;
if (noLoop !== null) warnSkipped('the edge’s workspace quota test (the rest runs unlimited)', noLoop);

type Status = PayloadOf<typeof RankStatusReported>;
type Chunk = PayloadOf<typeof RankLogChunk>;
const MiB = 1024 ** 2;
const H100 = join(FIXTURES, 'simulated', 'h100-node.inventory.yaml');
const POLICY = `version: 1
name: docker-test
gpus: { share: all, max_per_job: 2 }
cpu: { reserve_cores: 0 }
memory: { reserve: 0GiB }
images: { allow: ['gpunet/'] }
pricing: { asset: USDC, default_per_gpu_hour: '0.40' }
subnets: [public]
jobs: { max_duration: 1h }
disk: { workspace_per_rank: ${noLoop === null ? '128MiB' : 'unlimited'} }
`;

describe.skipIf(!docker)('the edge runs ranks in sandboxed containers (docker runtime)', () => {
  const engine = new Docker();
  let nats: NatsTestContext;
  let agent: EdgeAgent;
  let dir: string;
  const statuses = new EventCollector<Status>('rank statuses');
  const chunks = new EventCollector<Chunk>('log chunks');

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_docker' });
    await ensureStreams(await nats.jsm(), [...providerStreams, ...executionStreams], nats.prefix);
    nats.nc.subscribe(`${nats.prefix}.edge.*.rank-status.v2`, {
      callback: (_e, m) => statuses.push(m.json<{ data: Status }>().data),
    });
    nats.nc.subscribe(`${nats.prefix}.edge.*.log.*.v1`, {
      callback: (_e, m) => chunks.push(m.json<{ data: Chunk }>().data),
    });
    await nats.nc.flush();
    dir = await mkdtemp(join(tmpdir(), 'gpunet-edge-docker-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    agent = new EdgeAgent({
      identity: await createIdentity(dir),
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
        runtimes: async (context) => [await createDockerRuntime(context, { pull: false, pidsPollMs: 200 })],
      },
    });
    await agent.start();
  }, 60_000);

  afterAll(async () => {
    await agent?.stop({ flushTimeoutMs: 500 }).catch(() => undefined);
    const left = await engine.listContainers({
      all: true,
      filters: { label: [`${LABEL.edgeId}=${agent?.edgeId}`] },
    });
    await Promise.all(left.map((c) => engine.getContainer(c.Id).remove({ force: true })));
    await nats?.cleanup();
    // The ranks' workspace file systems are still mounted (kept for later attempts).
    if (dir) await removeWorkspaces(dir);
  }, 60_000);

  const request = async (subject: string, data: unknown): Promise<unknown> =>
    (await nats.nc.request(subject, JSON.stringify(data), { timeout: 30_000 })).json();

  const reserve = async (reservationId: string, jobId: string, gpu: number) => {
    const reply = await request(
      ReserveOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
      buildEnvelope(
        ReserveOnEdge,
        {
          reservationId,
          jobId,
          gpuUuids: [agent.inventory.gpus[gpu]!.uuid],
          cpuMillicores: 1_000,
          memoryBytes: 512 * MiB,
          image: JOB_BASE_IMAGE,
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

  const start = async (
    jobId: string,
    reservationId: string,
    over: Partial<PayloadOf<typeof StartRankOnEdge>>,
  ) =>
    RankStartReplySchema.parse(
      await request(
        StartRankOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
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
            runtime: 'docker',
            image: JOB_BASE_IMAGE,
            cmd: ['true'],
            entrypoint: null,
            env: { RANK: '0', WORLD_SIZE: '1' },
            workingDir: null,
            gpuUuids: [],
            limits: { cpuMillicores: 1_000, memoryBytes: 512 * MiB, pids: 64 },
            maxDurationMs: 600_000,
            overlay: null,
            ...over,
          },
          { streamId: jobId },
        ),
      ),
    );

  const exitOf = (jobId: string) =>
    statuses.waitFor((s) => s.jobId === jobId && s.state === 'exited', {
      timeoutMs: 60_000,
      description: `the exit of ${jobId}`,
    });
  const linesOf = (jobId: string) => chunks.items.filter((c) => c.jobId === jobId).flatMap((c) => c.lines);

  it('runs a rank in a container, ships its output and reports its exit code', async () => {
    await reserve('res-run', 'job-run', 0);
    const reply = await start('job-run', 'res-run', {
      cmd: ['python3', '-c', 'import os\nprint("uid", os.getuid(), os.getcwd())\nraise SystemExit(3)'],
      workingDir: 'out',
    });
    expect(reply).toMatchObject({ outcome: 'started', created: true });
    expect(await exitOf('job-run')).toMatchObject({ exitCode: 3, stopReason: null });
    await waitFor(() => linesOf('job-run').includes('uid 65532 /scratch/out'), {
      description: 'the rank’s output shipped',
    });
  }, 90_000);

  it.skipIf(noLoop !== null)(
    'the rank’s workspace is an ext4 file system of the policy’s disk.workspace_per_rank; writing past it fails ENOSPC',
    async () => {
      await reserve('res-disk', 'job-disk', 4);
      const reply = await start('job-disk', 'res-disk', {
        cmd: [
          'python3',
          '-c',
          `
import errno, os
st = os.statvfs('/scratch')
print('fs', [l.split()[2] for l in open('/proc/self/mounts') if l.split()[1] == '/scratch'][0], st.f_blocks * st.f_frsize, flush=True)
try:
    with open('/scratch/fill', 'wb') as f:
        for _ in range(512):
            f.write(b'x' * (1 << 20))
            f.flush()
            os.fsync(f.fileno())
    print('result ok', flush=True)
except OSError as e:
    print('result', errno.errorcode.get(e.errno, str(e)), flush=True)
`,
        ],
      });
      expect(reply).toMatchObject({ outcome: 'started' });
      expect(await exitOf('job-disk')).toMatchObject({ exitCode: 0 });
      await waitFor(() => linesOf('job-disk').some((l) => l.startsWith('result')), {
        description: 'the rank’s output shipped',
      });
      const [, fstype, size] = linesOf('job-disk')
        .find((l) => l.startsWith('fs '))!
        .split(' ');
      expect(fstype).toBe('ext4');
      expect(Number(size)).toBeGreaterThan(100 * MiB);
      expect(Number(size)).toBeLessThanOrEqual(128 * MiB);
      expect(linesOf('job-disk')).toContain('result ENOSPC');
    },
    90_000,
  );

  it('a rank over its memory limit is killed, and the edge reports oom', async () => {
    await reserve('res-oom', 'job-oom', 1);
    expect(
      await start('job-oom', 'res-oom', {
        limits: { cpuMillicores: 1_000, memoryBytes: 64 * MiB, pids: 64 },
        cmd: ['python3', '-c', 'hog = []\nwhile True:\n    hog.append(bytearray(8 * 1024 * 1024))'],
      }),
    ).toMatchObject({ outcome: 'started' });
    expect(await exitOf('job-oom')).toMatchObject({ exitCode: 137, stopReason: 'oom' });
  }, 90_000);

  it('a cancel stops the container and removes it', async () => {
    await reserve('res-cancel', 'job-cancel', 2);
    await start('job-cancel', 'res-cancel', {
      cmd: ['python3', '-c', 'import time\nprint("ready", flush=True)\ntime.sleep(1000)'],
    });
    await waitFor(() => linesOf('job-cancel').includes('ready'), {
      timeoutMs: 60_000,
      description: 'the rank up',
    });
    const id = agent.ranks.find((r) => r.jobId === 'job-cancel')!.runtimeId;
    const reply = StopRanksReplySchema.parse(
      await request(
        StopRanksOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
        buildEnvelope(
          StopRanksOnEdge,
          { jobId: 'job-cancel', attempt: null, reason: 'cancelled', graceMs: 2_000 },
          { streamId: 'job-cancel' },
        ),
      ),
    );
    expect(reply).toEqual({ jobId: 'job-cancel', stopping: 1 });
    expect(await exitOf('job-cancel')).toMatchObject({ stopReason: 'cancelled', signal: 'SIGTERM' });
    await expect(engine.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
  }, 90_000);

  it('refuses an image the provider does not allow, naming the field', async () => {
    await reserve('res-img', 'job-img', 3);
    expect(await start('job-img', 'res-img', { image: 'postgres:16' })).toMatchObject({
      outcome: 'rejected',
      reasons: [{ field: 'image' }],
    });
  }, 60_000);
});
