import {
  buildEnvelope,
  EdgeRegistered,
  EdgeStream,
  executionStreams,
  namespacedStream,
  type PayloadOf,
  providerStreams,
  type RankLogChunk,
  RankStartReplySchema,
  type RankStatusReported,
  ReservationReplySchema,
  ReserveOnEdge,
  StartRankOnEdge,
  verifyEdgeReport,
} from '@gpunet/contracts';
import { ensureStreams } from '@gpunet/eventing';
import { EventCollector, type NatsTestContext, requireDocker, useNats, waitFor } from '@gpunet/testing';
import Docker from 'dockerode';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeCliIo, runEdgeCli } from '../src/app/edge-cli';
import { createIdentity } from '../src/infra/identity.store';
import { removeWorkspaces } from '../src/infra/workspace';
import { JOB_BASE_IMAGE, LABEL, SANDBOX_USER } from '../src/infra/runtime/docker-sandbox';
import { type DockerInfo, dockerIsolation } from '../src/infra/runtime/isolation';
import { FIXTURES } from './support/fixtures';

/*
 * `provider-edge start` with no --runtime, on the real engine: the edge reports the isolation the
 * engine's docker info gives (at least `container`), accepts a job whose subnet requires
 * containers, and runs its rank as a sandboxed container (uid 65532, labelled with the edge).
 */
const docker = await requireDocker('provider-edge started with its default runtime');

type Status = PayloadOf<typeof RankStatusReported>;
type Chunk = PayloadOf<typeof RankLogChunk>;
const MiB = 1024 ** 2;
const H100 = join(FIXTURES, 'simulated', 'h100-node.inventory.yaml');
const POLICY = `version: 1
name: default-runtime-test
gpus: { share: all, max_per_job: 2 }
cpu: { reserve_cores: 0 }
memory: { reserve: 0GiB }
images: { allow: ['gpunet/'] }
pricing: { asset: USDC, default_per_gpu_hour: '0.40' }
subnets: [public]
jobs: { max_duration: 1h }
`;

describe.skipIf(!docker)('provider-edge start with no --runtime', () => {
  const engine = new Docker();
  let nats: NatsTestContext;
  let dir: string;
  let edgeId: string;
  let stop: () => void = () => undefined;
  let exited: Promise<number> | undefined;
  const out: string[] = [];
  const statuses = new EventCollector<Status>('rank statuses');
  const chunks = new EventCollector<Chunk>('log chunks');

  const quietIo = (sink: string[], untilStopped: () => Promise<void>): EdgeCliIo => ({
    out: (t) => sink.push(t),
    err: (t) => sink.push(t),
    env: {},
    untilStopped,
    onReload: () => undefined,
  });

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_default_runtime' });
    await ensureStreams(await nats.jsm(), [...providerStreams, ...executionStreams], nats.prefix);
    nats.nc.subscribe(`${nats.prefix}.edge.*.rank-status.v2`, {
      callback: (_e, m) => statuses.push(m.json<{ data: Status }>().data),
    });
    nats.nc.subscribe(`${nats.prefix}.edge.*.log.*.v1`, {
      callback: (_e, m) => chunks.push(m.json<{ data: Chunk }>().data),
    });
    await nats.nc.flush();
    dir = await mkdtemp(join(tmpdir(), 'gpunet-edge-default-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    edgeId = (await createIdentity(dir)).edgeId;
  }, 60_000);

  afterAll(async () => {
    stop();
    if (exited) expect(await exited).toBe(0);
    const left = await engine.listContainers({
      all: true,
      filters: { label: [`${LABEL.edgeId}=${edgeId}`] },
    });
    await Promise.all(left.map((c) => engine.getContainer(c.Id).remove({ force: true })));
    await nats?.cleanup();
    // The rank's workspace is a mounted file system the edge keeps until the job ends: unmount it.
    if (dir) await removeWorkspaces(dir);
  }, 60_000);

  it('status before the first start says what the default runtime, docker, would report', async () => {
    const json: string[] = [];
    expect(
      await runEdgeCli(
        ['status', '--dir', dir, '--simulate', H100, '--json'],
        quietIo(json, () => Promise.resolve()),
      ),
    ).toBe(0);
    const expected = dockerIsolation((await engine.info()) as DockerInfo, null);
    expect((JSON.parse(json.join('')) as { isolation: unknown }).isolation).toEqual({
      reported: false,
      ...expected,
    });
  });

  it('reports the engine’s isolation in its signed registration, and no unsafe warning', async () => {
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    exited = runEdgeCli(
      [
        'start',
        '--dir',
        dir,
        '--simulate',
        H100,
        '--nats',
        String(nats.servers),
        '--prefix',
        nats.prefix,
        '--heartbeat',
        '1s',
        '--rescan',
        '0s',
        '--overlay',
        'off',
      ],
      quietIo(out, () => stopped),
    );
    await waitFor(() => out.join('').includes('"msg":"edge started"'), {
      timeoutMs: 60_000,
      description: `the edge to start: ${out.join('')}`,
    });
    expect(out.join('')).not.toContain('UNSAFE');
    const stored = await (
      await nats.jsm()
    ).streams.getMessage(namespacedStream(EdgeStream, nats.prefix).name, {
      last_by_subj: EdgeRegistered.subject({ edgeId }, nats.prefix),
    });
    const data = stored!.json<{ data: PayloadOf<typeof EdgeRegistered> }>().data;
    expect(verifyEdgeReport(EdgeRegistered, edgeId, data)).toBeNull();
    const expected = dockerIsolation((await engine.info()) as DockerInfo, null);
    expect(data.host.isolation).toEqual(expected);
    expect(data.host.isolation).toMatchObject({ runtime: 'docker' });
    expect(['container', 'container-userns', 'gvisor']).toContain(data.host.isolation?.level);
  }, 90_000);

  it('accepts a job whose subnet requires containers and runs its rank in a sandboxed container', async () => {
    const request = async (subject: string, data: unknown): Promise<unknown> =>
      (await nats.nc.request(subject, JSON.stringify(data), { timeout: 30_000 })).json();
    const reply = await request(
      ReserveOnEdge.subject({ edgeId }, nats.prefix),
      buildEnvelope(
        ReserveOnEdge,
        {
          reservationId: 'res-default',
          jobId: 'job-default',
          gpuUuids: ['SIM-nvidia-0'],
          cpuMillicores: 1_000,
          memoryBytes: 512 * MiB,
          image: JOB_BASE_IMAGE,
          maxDurationMs: 600_000,
          subnet: 'public',
          asset: 'USDC',
          pricePerGpuHourMinor: '3000000',
          holdUntil: new Date(Date.now() + 600_000).toISOString(),
          minimumIsolation: 'container',
        },
        { streamId: 'job-default' },
      ),
    );
    expect(ReservationReplySchema.parse(reply)).toMatchObject({ outcome: 'accepted' });
    const started = RankStartReplySchema.parse(
      await request(
        StartRankOnEdge.subject({ edgeId }, nats.prefix),
        buildEnvelope(
          StartRankOnEdge,
          {
            jobId: 'job-default',
            attempt: 1,
            reservationId: 'res-default',
            allocation: 'a-1',
            rank: 0,
            localRank: 0,
            worldSize: 1,
            runtime: 'docker',
            image: JOB_BASE_IMAGE,
            cmd: [
              'python3',
              '-c',
              'import os, time\nprint("uid", os.getuid(), flush=True)\ntime.sleep(1000)',
            ],
            entrypoint: null,
            env: { RANK: '0', WORLD_SIZE: '1' },
            workingDir: null,
            gpuUuids: [],
            limits: { cpuMillicores: 1_000, memoryBytes: 512 * MiB, pids: 64 },
            maxDurationMs: 600_000,
            overlay: null,
          },
          { streamId: 'job-default' },
        ),
      ),
    );
    expect(started).toMatchObject({ outcome: 'started', created: true });
    await waitFor(
      () =>
        chunks.items
          .filter((c) => c.jobId === 'job-default')
          .flatMap((c) => c.lines)
          .includes('uid 65532'),
      { timeoutMs: 60_000, description: 'the rank’s output: the sandbox user' },
    );
    const [container, ...others] = await engine.listContainers({
      filters: { label: [`${LABEL.edgeId}=${edgeId}`] },
    });
    expect(others).toEqual([]);
    const inspected = await engine.getContainer(container!.Id).inspect();
    expect(inspected.Config.User).toBe(SANDBOX_USER);
    expect(inspected.HostConfig).toMatchObject({
      CapDrop: ['ALL'],
      ReadonlyRootfs: true,
      NetworkMode: 'none',
    });
    expect(inspected.HostConfig.SecurityOpt).toContain('no-new-privileges:true');
    expect(statuses.items.find((s) => s.jobId === 'job-default')).toMatchObject({ state: 'running' });
  }, 120_000);
});
