import { readdir, readFile, readlink, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventCollector, requireDocker, testNamespace } from '@gpunet/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RankLaunch } from '../src/app/rank-runtime.port';
import { parsePolicy } from '../src/domain/policy/policy';
import { JOB_BASE_IMAGE, LABEL, RUNSC_PIDS_HEADROOM } from '../src/infra/runtime/docker-sandbox';
import { createDockerRuntime } from '../src/infra/runtime/docker-wiring';
import type { DockerRuntime } from '../src/infra/runtime/docker.runtime';
import { fixture } from './support/fixtures';

/*
 * gVisor (`runsc`) as the OCI runtime of rank containers, chosen by the provider's policy
 * (`sandbox.runtime: runsc`), on a real engine that lists the runtime (deploy/images/ensure-docker.sh
 * installs Debian's runsc and registers it). Skipped where the daemon has no runtime `runsc`.
 */
const docker = await requireDocker('provider-edge gVisor rank runtime');
const engine = new Docker();
const runtimes = docker ? Object.keys(((await engine.info()) as { Runtimes?: object }).Runtimes ?? {}) : [];
const hasRunsc = runtimes.includes('runsc');
const GiB = 1024 ** 3;

/**
 * Run by the rank: sets up an io_uring (a syscall Docker's default seccomp profile lets through to
 * the host kernel, and the source of many of its privilege escalations), says which kernel answers,
 * then holds the ring open until the test writes /scratch/release.
 */
const PROBE = `
import ctypes, os, platform, time
libc = ctypes.CDLL(None, use_errno=True)
params = (ctypes.c_ubyte * 120)()
fd = libc.syscall(425, 4, ctypes.byref(params))  # io_uring_setup(4 entries)
print('io_uring', 'fd' if fd >= 0 else os.strerror(ctypes.get_errno()), flush=True)
print('kernel', platform.release(), open('/proc/version').read().split('(')[0].strip(), flush=True)
print('ready', flush=True)
while not os.path.exists('/scratch/release'):
    time.sleep(0.02)
`;

/** Host pids whose cgroup names the container: its processes, and on runsc gVisor's own. */
const hostPidsOf = async (containerId: string): Promise<number[]> => {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const cgroup = await readFile(`/proc/${entry}/cgroup`, 'utf8').catch(() => '');
    if (cgroup.includes(containerId)) pids.push(Number(entry));
  }
  return pids;
};

/** How many io_uring instances the host kernel holds open for `pids`. */
const hostIoUrings = async (pids: readonly number[]): Promise<number> => {
  let rings = 0;
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds)
      if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === 'anon_inode:[io_uring]') rings += 1;
  }
  return rings;
};

/** The host lets processes set up io_uring at all (kernel.io_uring_disabled absent or 0). */
const ioUringOnHost =
  (await readFile('/proc/sys/kernel/io_uring_disabled', 'utf8').catch(() => '0')).trim() === '0';

describe.skipIf(!docker || !hasRunsc)('ranks on gVisor (policy sandbox.runtime: runsc)', () => {
  const edgeId = testNamespace('gvisor').replace(/_/g, '-');
  const workspaces: string[] = [];
  const made: DockerRuntime[] = [];
  let seq = 0;

  /** The edge's docker runtime as `provider-edge start` makes it, from a policy with this runtime. */
  const runtimeFor = async (sandboxRuntime: 'runc' | 'runsc'): Promise<DockerRuntime> => {
    const parsed = parsePolicy(
      `${fixture('policy', 'lab.policy.yaml')}\nsandbox:\n  runtime: ${sandboxRuntime}\n`,
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    expect(parsed.policy.sandboxRuntime).toBe(sandboxRuntime);
    const runtime = await createDockerRuntime(
      {
        edgeId,
        policy: { ...parsed.policy, images: ['gpunet/'], reserveCpuMillicores: 0, reserveMemoryBytes: 0 },
        host: { cpu: { model: 'test', logicalCores: 2 } as never, memoryBytes: 4 * GiB },
        inventory: { gpus: [], simulated: false },
        log: () => undefined,
      },
      { docker: engine, pull: false, pidsPollMs: 200 },
    );
    made.push(runtime);
    return runtime;
  };

  const launch = async (cmd: string[], pids = 64): Promise<RankLaunch> => {
    const ws = await mkdtemp(join(tmpdir(), 'gpunet-gvisor-'));
    workspaces.push(ws);
    seq += 1;
    return {
      jobId: `job-${seq}`,
      attempt: 1,
      rank: 0,
      image: JOB_BASE_IMAGE,
      cmd,
      entrypoint: null,
      env: { GPUNET_WORKSPACE: ws },
      workspace: ws,
      workingDir: ws,
      gpuUuids: [],
      gpuVendor: null,
      limits: { cpuMillicores: 1000, memoryBytes: 1 * GiB, pids },
      netns: null,
      labels: { 'org.gpunet.test': edgeId },
    };
  };

  const start = async (runtime: DockerRuntime, l: RankLaunch) => {
    const rank = await runtime.start(l);
    const output = new EventCollector<string>(`rank ${l.jobId} output`);
    rank.onOutput((_stream, line) => output.push(line));
    const line = async (prefix: string) =>
      output.waitFor((o) => o.startsWith(prefix), { timeoutMs: 120_000 });
    return { rank, line, release: () => writeFile(join(l.workspace, 'release'), '') };
  };

  beforeAll(async () => {
    await engine.getImage(JOB_BASE_IMAGE).inspect();
  });

  afterAll(async () => {
    for (const runtime of made) await runtime.reapOrphans(edgeId);
    await Promise.all(workspaces.map((w) => rm(w, { recursive: true, force: true })));
  });

  it('a CPU rank runs on runsc: PyTorch computes, inside the sandbox settings, with headroom for gVisor', async () => {
    const runtime = await runtimeFor('runsc');
    expect(await runtime.unavailable()).toBeNull();
    const { rank, line, release } = await start(
      runtime,
      await launch([
        'python3',
        '-c',
        `
import os, time, torch
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
print('torch', float((x @ x.T).sum()), flush=True)
print('id', os.getuid(), os.getgid(), flush=True)
open('/scratch/out', 'w').write('written under gVisor')
print('ready', flush=True)
while not os.path.exists('/scratch/release'):
    time.sleep(0.02)
`,
      ]),
    );
    await line('ready');
    const info = await engine.getContainer(rank.id).inspect();
    expect(info.HostConfig).toMatchObject({
      Runtime: 'runsc',
      PidsLimit: 64 + RUNSC_PIDS_HEADROOM,
      CapDrop: ['ALL'],
      ReadonlyRootfs: true,
      NetworkMode: 'none',
    });
    expect(await line('torch')).toBe('torch 83.0');
    expect(await line('id')).toBe('id 65532 65532');
    await release();
    expect(await rank.exited).toEqual({ exitCode: 0, signal: null, reason: null });
    expect(await readFile(join(info.Mounts[0]!.Source, 'out'), 'utf8')).toBe('written under gVisor');
  });

  it.skipIf(!ioUringOnHost)(
    'io_uring_setup, which runc with Docker’s seccomp passes to the host kernel, stays inside gVisor on runsc',
    async () => {
      const seen: Record<string, { io: string; kernel: string; pids: number; hostRings: number }> = {};
      for (const sandboxRuntime of ['runc', 'runsc'] as const) {
        const runtime = await runtimeFor(sandboxRuntime);
        const { rank, line, release } = await start(runtime, await launch(['python3', '-c', PROBE]));
        await line('ready');
        const pids = await hostPidsOf(rank.id);
        seen[sandboxRuntime] = {
          io: await line('io_uring'),
          kernel: await line('kernel'),
          pids: pids.length,
          hostRings: await hostIoUrings(pids),
        };
        await release();
        expect(await rank.exited).toMatchObject({ exitCode: 0 });
      }
      const hostKernel = (await readFile('/proc/sys/kernel/osrelease', 'utf8')).trim();
      // runc: the rank's io_uring is the host kernel's (an anon_inode:[io_uring] fd of its process),
      // and the kernel it talks to is the host's.
      expect(seen['runc']).toMatchObject({ io: 'io_uring fd', hostRings: 1 });
      expect(seen['runc']!.kernel).toBe(`kernel ${hostKernel} Linux version ${hostKernel}`);
      // runsc: the rank gets its ring too, but from gVisor's Sentry: no process of the container's
      // cgroup — gVisor's own included, so the check is not vacuous — holds one on the host, and the
      // kernel that answers uname and /proc is gVisor's, not the host's.
      expect(seen['runsc']).toMatchObject({ io: 'io_uring fd', hostRings: 0 });
      expect(seen['runsc']!.pids).toBeGreaterThan(0);
      expect(seen['runsc']!.kernel).not.toContain(hostKernel);
      expect(seen['runsc']!.kernel).toMatch(/^kernel 4\.4\.0 Linux version 4\.4\.0/);
    },
  );

  it('refuses a rank with GPUs on runsc, saying why, before anything is created', async () => {
    const runtime = await runtimeFor('runsc');
    const l = { ...(await launch(['true'])), gpuUuids: ['GPU-11111111-2222-3333-4444-555555555555'] };
    await expect(runtime.start({ ...l, gpuVendor: 'nvidia' })).rejects.toMatchObject({
      name: 'RankStartError',
      field: 'gpuUuids',
      message: expect.stringMatching(/runsc.*no nvproxy/),
    });
    const left = await engine.listContainers({
      all: true,
      filters: { label: [`${LABEL.jobId}=${l.jobId}`, `${LABEL.edgeId}=${edgeId}`] },
    });
    expect(left).toEqual([]);
  });
});
