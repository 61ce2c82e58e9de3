import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EventCollector, requireDocker, testNamespace } from '@gpunet/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_BASE_IMAGE } from '../src/infra/runtime/docker-sandbox';
import { DockerRuntime } from '../src/infra/runtime/docker.runtime';
import { workspaceImage } from '../src/infra/runtime/workspace-quota';
import { mountPointsUnder, removeWorkspaces } from '../src/infra/workspace';
import type { RankLaunch } from '../src/app/rank-runtime.port';
import { loopMountProblem, warnSkipped } from './support/loop';

/*
 * The disk quota of a rank's workspace (policy `disk.workspace_per_rank`) on a real engine and
 * real loop devices: the docker runtime mounts a sparse ext4 image of the quota's size on the
 * workspace, the rank writing past it gets ENOSPC, and the host's disk holds only what it wrote.
 */
const exec = promisify(execFile);
const MiB = 1024 ** 2;
const QUOTA = 64 * MiB;

const docker = await requireDocker('provider-edge workspace disk quota');
const noLoop = docker ? await loopMountProblem() : 'Docker does not answer';
if (docker && noLoop !== null) warnSkipped('the workspace disk quota suite', noLoop);

const mounts = async (dir: string) => mountPointsUnder(await readFile('/proc/self/mountinfo', 'utf8'), dir);
/** Bytes the file really takes on the host's disk (a sparse file: only what was written). */
const allocated = async (file: string) => (await stat(file)).blocks * 512;
const hostFree = async (dir: string) => {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
};

describe.skipIf(!docker || noLoop !== null)('a rank’s workspace is a file system of its quota', () => {
  const edgeId = testNamespace('quota').replace(/_/g, '-');
  let base: string;
  let runtime: DockerRuntime;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'gpunet-quota-'));
    runtime = new DockerRuntime({
      edgeId,
      docker: new Docker(),
      allowedImages: ['gpunet/'],
      limits: { maxMemoryBytes: 2 * 1024 * MiB, maxCpuMillicores: 2000, maxPids: 256 },
      pull: false,
      workspaceBytes: QUOTA,
    });
  });
  afterAll(async () => {
    await runtime?.reapOrphans(edgeId);
    if (base) await removeWorkspaces(base);
  });

  /** The agent's layout: `workspaces/<jobId>/rank-<n>`, created 0700 before the runtime prepares it. */
  const workspace = async (jobId: string): Promise<string> => {
    const dir = join(base, jobId, 'rank-0');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  };

  const launch = (jobId: string, ws: string, cmd: string[]): RankLaunch => ({
    jobId,
    attempt: 1,
    rank: 0,
    image: JOB_BASE_IMAGE,
    cmd,
    entrypoint: null,
    env: {},
    workspace: ws,
    workingDir: ws,
    gpuUuids: [],
    gpuVendor: null,
    limits: { cpuMillicores: 1000, memoryBytes: 256 * MiB, pids: 64 },
    netns: null,
    labels: {},
  });

  it('a job writing past its disk quota fails with ENOSPC, and the host’s free space barely moves', async () => {
    const ws = await workspace('job-fill');
    const before = await hostFree(base);
    await runtime.prepareWorkspace(ws);
    await runtime.prepareWorkspace(ws); // idempotent: still one mount
    expect(await mounts(ws)).toEqual([ws]);
    // Sparse: a 64 MiB file system takes a few MiB of the host until the rank writes.
    expect(await allocated(workspaceImage(ws))).toBeLessThan(8 * MiB);

    // Tries to write 1 GiB, 1 MiB at a time: 16× its quota.
    const rank = await runtime.start(
      launch('job-fill', ws, [
        'python3',
        '-c',
        `
import errno, os
st = os.statvfs('/scratch')
print('fs', [l.split()[2] for l in open('/proc/self/mounts') if l.split()[1] == '/scratch'][0], st.f_blocks * st.f_frsize, flush=True)
written, result = 0, 'ok'
try:
    with open('/scratch/fill', 'wb') as f:
        for _ in range(1024):
            f.write(b'x' * (1 << 20))
            f.flush()
            os.fsync(f.fileno())
            written += 1 << 20
except OSError as e:
    result = errno.errorcode.get(e.errno, str(e))
print('wrote', written, result, flush=True)
raise SystemExit(0 if result == 'ENOSPC' else 1)
`,
      ]),
    );
    const output = new EventCollector<string>('quota rank output');
    rank.onOutput((_s, line) => output.push(line));
    expect(await rank.exited).toMatchObject({ exitCode: 0 });
    const [, fstype, size] = output.items.find((l) => l.startsWith('fs '))!.split(' ');
    expect(fstype).toBe('ext4');
    expect(Number(size)).toBeGreaterThan(QUOTA * 0.8);
    expect(Number(size)).toBeLessThanOrEqual(QUOTA);
    const [, written, result] = output.items.find((l) => l.startsWith('wrote '))!.split(' ');
    expect(result).toBe('ENOSPC');
    expect(Number(written)).toBeGreaterThan(QUOTA / 2);
    expect(Number(written)).toBeLessThanOrEqual(QUOTA);

    // What the host holds for it is bounded by the quota, not by what the job tried (1 GiB).
    expect(await allocated(workspaceImage(ws))).toBeLessThanOrEqual(QUOTA + MiB);
    // Other processes share this disk, hence the margin; an unenforced quota would have cost 1 GiB.
    expect(before - (await hostFree(base))).toBeLessThan(QUOTA + 128 * MiB);
  });

  it('keeps what a rank wrote across attempts, even once unmounted (an edge restart), and removes it with the workspace', async () => {
    const ws = await workspace('job-keep');
    await runtime.prepareWorkspace(ws);
    await writeFile(join(ws, 'checkpoint'), 'step 7');
    await exec('umount', [ws]);
    expect(await mounts(ws)).toEqual([]);
    await runtime.prepareWorkspace(ws);
    expect(await readFile(join(ws, 'checkpoint'), 'utf8')).toBe('step 7');

    const image = workspaceImage(ws);
    await removeWorkspaces(join(base, 'job-keep'));
    expect(await mounts(join(base, 'job-keep'))).toEqual([]);
    // The loop device went with the mount (autoclear), the image and the directory with the removal.
    expect((await exec('losetup', ['-j', image])).stdout.trim()).toBe('');
    await expect(stat(join(base, 'job-keep'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses (RUNTIME_UNAVAILABLE, naming the key) when the Docker daemon sees another mount namespace', async () => {
    // A process in a mount namespace of its own stands in for a daemon the edge's mounts never reach.
    const other = spawn('unshare', ['--mount', 'sh', '-c', 'echo ready; exec sleep infinity'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      // Printed from inside: the namespace exists.
      await new Promise<void>((resolve, reject) => {
        other.stdout.once('data', () => resolve());
        other.once('exit', (code) => reject(new Error(`unshare exited ${code}`)));
      });
      const pidFile = join(base, 'other-daemon.pid');
      await writeFile(pidFile, String(other.pid));
      const elsewhere = new DockerRuntime({
        edgeId,
        docker: new Docker(),
        allowedImages: ['gpunet/'],
        limits: { maxMemoryBytes: 1024 * MiB, maxCpuMillicores: 1000 },
        workspaceBytes: QUOTA,
        dockerPidFile: pidFile,
      });
      const ws = await workspace('job-elsewhere');
      await expect(elsewhere.prepareWorkspace(ws)).rejects.toMatchObject({
        name: 'RankStartError',
        code: 'RUNTIME_UNAVAILABLE',
        field: 'workspace',
        message: expect.stringMatching(/disk\.workspace_per_rank.*another mount namespace/),
      });
      expect(await mounts(ws)).toEqual([]);
      await expect(stat(workspaceImage(ws))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('without a quota (workspaceBytes null) the workspace stays a plain directory', async () => {
    const plain = new DockerRuntime({
      edgeId,
      docker: new Docker(),
      allowedImages: ['gpunet/'],
      limits: { maxMemoryBytes: 1024 * MiB, maxCpuMillicores: 1000 },
    });
    const ws = await workspace('job-plain');
    await plain.prepareWorkspace(ws);
    expect(await mounts(ws)).toEqual([]);
    await rm(join(base, 'job-plain'), { recursive: true });
  });
});
