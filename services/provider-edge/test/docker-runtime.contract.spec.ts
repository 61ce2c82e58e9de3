import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EventCollector, requireDocker, testNamespace, waitFor } from '@gpunet/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parseNvidiaSmiQuery } from '../src/domain/detection/nvidia-smi.parser';
import { probeContainerGpuSupport } from '../src/infra/runtime/docker-host';
import { JOB_BASE_IMAGE, LABEL } from '../src/infra/runtime/docker-sandbox';
import { DockerRuntime } from '../src/infra/runtime/docker.runtime';
import { type RankLaunch, RankStartError } from '../src/app/rank-runtime.port';
import { fixture } from './support/fixtures';

/*
 * The docker runtime against a real engine (deploy/images/ensure-docker.sh starts one and builds
 * gpunet/job-base:torch-cpu). Every sandbox promise of docs/security.md is checked twice: on the
 * created container's inspect, and from inside the rank (what the kernel actually enforces).
 * Ranks hand-shake with the test through a file in their workspace instead of sleeping.
 */
const docker = await requireDocker('provider-edge docker rank runtime');
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const exec = promisify(execFile);

/** Python run by ranks: waits until the test writes /scratch/release. */
const WAIT_RELEASE = `
import os, time
def wait_release():
    while not os.path.exists('/scratch/release'):
        time.sleep(0.02)
`;
const py = (body: string): string[] => ['python3', '-c', `${WAIT_RELEASE}\n${body}`];

/** Connects to each `host:port` argument and prints `net <target> <connected | errno name>`. */
const NET_PROBE = `
import errno, socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(':', 1)
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, int(port)))
        result = 'connected'
    except socket.timeout:
        result = 'timeout'
    except OSError as e:
        result = errno.errorcode.get(e.errno, str(e))
    print('net', target, result, flush=True)
print('ifaces', ','.join(sorted(n for _, n in socket.if_nameindex())), flush=True)
`;

describe.skipIf(!docker)('DockerRuntime on a real engine', () => {
  const engine = new Docker();
  const edgeId = testNamespace('dockerrt').replace(/_/g, '-');
  const workspaces: string[] = [];
  let runtime: DockerRuntime;

  const workspace = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-ws-'));
    workspaces.push(dir);
    return dir;
  };

  let seq = 0;
  const launch = async (over: Partial<RankLaunch> = {}): Promise<RankLaunch> => {
    const ws = over.workspace ?? (await workspace());
    seq += 1;
    return {
      jobId: `job-${seq}`,
      attempt: 1,
      rank: 0,
      image: JOB_BASE_IMAGE,
      cmd: ['true'],
      entrypoint: null,
      env: { GPUNET_WORKSPACE: ws },
      workspace: ws,
      workingDir: ws,
      gpuUuids: [],
      gpuVendor: null,
      limits: { cpuMillicores: 1000, memoryBytes: 512 * MiB, pids: 64 },
      netns: null,
      labels: { 'org.gpunet.test': edgeId },
      ...over,
    };
  };

  /** Starts a rank and collects its output lines. */
  const start = async (l: RankLaunch, rt = runtime) => {
    const rank = await rt.start(l);
    const output = new EventCollector<{ stream: 'stdout' | 'stderr'; line: string }>(
      `rank ${l.jobId} output`,
    );
    rank.onOutput((stream, line) => output.push({ stream, line }));
    const line = async (prefix: string) =>
      (await output.waitFor((o) => o.line.startsWith(prefix), { timeoutMs: 60_000 })).line;
    const release = () => writeFile(join(l.workspace, 'release'), '');
    return { rank, output, line, release };
  };

  beforeAll(async () => {
    try {
      await engine.getImage(JOB_BASE_IMAGE).inspect();
    } catch {
      throw new Error(`${JOB_BASE_IMAGE} is missing: run deploy/images/ensure-docker.sh (builds it offline)`);
    }
    runtime = new DockerRuntime({
      edgeId,
      docker: engine,
      allowedImages: ['gpunet/', 'nats:'],
      limits: { maxMemoryBytes: 2 * GiB, maxCpuMillicores: 2000, maxPids: 256 },
      pull: false,
      pidsPollMs: 100,
    });
  });

  afterAll(async () => {
    if (runtime) await runtime.reapOrphans(edgeId);
    await Promise.all(workspaces.map((w) => rm(w, { recursive: true, force: true })));
  });

  it('is available, and reports the engine and the GPU support of this host', async () => {
    expect(await runtime.unavailable()).toBeNull();
    const support = await probeContainerGpuSupport(engine);
    expect(support.engine).toMatch(/^[0-9]+\./);
    expect(typeof support.nvidia.available).toBe('boolean');
    const down = new DockerRuntime({
      edgeId,
      docker: new Docker({ socketPath: '/nonexistent/docker.sock' }),
      allowedImages: ['*'],
      limits: { maxMemoryBytes: GiB, maxCpuMillicores: 1000 },
    });
    expect(await down.unavailable()).toMatch(/does not answer/);
    await expect(down.start(await launch())).rejects.toMatchObject({
      name: 'RankStartError',
      code: 'RUNTIME_UNAVAILABLE',
    });
    expect(
      (await probeContainerGpuSupport(new Docker({ socketPath: '/nonexistent/docker.sock' }))).nvidia,
    ).toEqual({
      available: false,
      detail: 'the Docker engine does not answer',
    });
  });

  it('creates the container with every sandbox setting, and the kernel enforces them inside', async () => {
    const l = await launch({
      cmd: py(`
import socket
status = open('/proc/self/status').read().splitlines()
for key in ('CapEff', 'CapPrm', 'CapBnd', 'NoNewPrivs', 'Seccomp'):
    print(key, [l.split()[1] for l in status if l.startswith(key + ':')][0], flush=True)
print('id', os.getuid(), os.getgid(), sorted(os.getgroups()), flush=True)
print('cwd', os.getcwd(), flush=True)
print('env', os.environ['GPUNET_WORKSPACE'], os.environ['NVIDIA_VISIBLE_DEVICES'], flush=True)
print('ifaces', ','.join(n for _, n in socket.if_nameindex()), flush=True)
print('mounts', ' '.join(sorted(l.split()[1] for l in open('/proc/self/mounts') if l.split()[1].startswith(('/scratch', '/tmp', '/dev/shm')))), flush=True)
print('ready', flush=True)
wait_release()
`),
      limits: { cpuMillicores: 1500, memoryBytes: 300 * MiB, pids: 50 },
    });
    const { rank, line, release } = await start(l);
    await line('ready');
    const info = await engine.getContainer(rank.id).inspect();
    const host = info.HostConfig;
    expect(host).toMatchObject({
      Privileged: false,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      ReadonlyRootfs: true,
      NetworkMode: 'none',
      IpcMode: 'private',
      Memory: 300 * MiB,
      MemorySwap: 300 * MiB,
      NanoCpus: 1_500_000_000,
      PidsLimit: 50,
      Init: true,
      PublishAllPorts: false,
      Tmpfs: { '/tmp': `rw,nosuid,nodev,noexec,size=${256 * MiB}` },
    });
    expect(host.CapAdd ?? []).toEqual([]);
    expect(host.Binds ?? []).toEqual([]);
    expect(host.DeviceRequests ?? []).toEqual([]);
    expect(host.Devices ?? []).toEqual([]);
    expect(host.PortBindings ?? {}).toEqual({});
    expect(info.Config.User).toBe('65532:65532');
    expect(info.Config.Labels).toMatchObject({
      [LABEL.managed]: 'true',
      [LABEL.edgeId]: edgeId,
      [LABEL.role]: 'rank',
      [LABEL.jobId]: l.jobId,
      [LABEL.imageRef]: JOB_BASE_IMAGE,
      [LABEL.imageId]: rank.image.id,
      'org.gpunet.test': edgeId,
    });
    // Pinned: the container runs the content id that was checked, not whatever the tag says later.
    expect(info.Image).toBe(rank.image.id);
    expect(rank.image).toMatchObject({
      ref: JOB_BASE_IMAGE,
      id: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    // The only host path: the workspace.
    expect(
      info.Mounts.map((m) => ({ type: m.Type, source: m.Source, destination: m.Destination, rw: m.RW })),
    ).toEqual([{ type: 'bind', source: l.workspace, destination: '/scratch', rw: true }]);
    expect(info.State.Running).toBe(true);

    expect(await line('CapEff')).toBe('CapEff 0000000000000000');
    expect(await line('CapPrm')).toBe('CapPrm 0000000000000000');
    expect(await line('CapBnd')).toBe('CapBnd 0000000000000000');
    expect(await line('NoNewPrivs')).toBe('NoNewPrivs 1');
    // 2 = SECCOMP_MODE_FILTER: Docker's default profile is loaded.
    expect(await line('Seccomp')).toBe('Seccomp 2');
    expect(await line('id ')).toBe('id 65532 65532 [65532]');
    expect(await line('cwd')).toBe('cwd /scratch');
    expect(await line('env')).toBe('env /scratch void');
    expect(await line('ifaces')).toBe('ifaces lo');
    expect(await line('mounts')).toBe('mounts /dev/shm /scratch /tmp');

    await release();
    expect(await rank.exited).toEqual({ exitCode: 0, signal: null, reason: null });
    // Released: the container is gone.
    await expect(engine.getContainer(rank.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
  });

  it('the job base image runs torch (CPU) inside the sandbox', async () => {
    const { rank, line } = await start(
      await launch({
        limits: { cpuMillicores: 1000, memoryBytes: GiB, pids: 64 },
        cmd: [
          'python3',
          '-c',
          "import torch\nprint('torch', torch.__version__.split('+')[0], torch.cuda.is_available(), int(torch.arange(5).sum()), flush=True)",
        ],
      }),
    );
    expect(await line('torch')).toMatch(/^torch 1\.[0-9]+\.[0-9]+\S* False 10$/);
    expect(await rank.exited).toMatchObject({ exitCode: 0 });
  });

  it('a rank cannot write outside its scratch: the root is read-only, /tmp is noexec', async () => {
    // The agent names the workspace as it made it and the working directory resolved through
    // symlinks: both spellings must land on /scratch.
    const real = await workspace();
    const link = `${real}-link`;
    workspaces.push(link);
    await symlink(real, link);
    // As the agent makes it: 0700, owned by the edge.
    await mkdir(join(real, 'src'), { mode: 0o700 });
    const l = await launch({
      workspace: link,
      workingDir: join(real, 'src'),
      env: { OUT: join(link, 'out.txt') },
      cmd: py(`
import shutil, subprocess
print('cwd', os.getcwd(), os.environ['OUT'], flush=True)
for path in ('/etc/gpunet', '/gpunet', '/usr/lib/gpunet', '/var/tmp/gpunet', '/home/gpunet', os.environ['OUT'], '/scratch/src/in-cwd', '/tmp/t.sh'):
    try:
        with open(path, 'w') as f:
            f.write('#!/bin/sh\\necho ran\\n')
        print('write', path, 'ok', flush=True)
    except OSError as e:
        print('write', path, os.strerror(e.errno), flush=True)
os.chmod('/tmp/t.sh', 0o755)
try:
    subprocess.run(['/tmp/t.sh'], check=True)
    print('exec /tmp ran', flush=True)
except OSError as e:
    print('exec /tmp', os.strerror(e.errno), flush=True)
print('done', flush=True)
`),
    });
    const { rank, output, line } = await start(l);
    expect(await line('cwd')).toBe('cwd /scratch/src /scratch/out.txt');
    await line('done');
    const writes = output.items.filter((o) => o.line.startsWith('write ')).map((o) => o.line);
    expect(writes).toEqual([
      'write /etc/gpunet Read-only file system',
      'write /gpunet Read-only file system',
      'write /usr/lib/gpunet Read-only file system',
      'write /var/tmp/gpunet Read-only file system',
      'write /home/gpunet Read-only file system',
      'write /scratch/out.txt ok',
      'write /scratch/src/in-cwd ok',
      'write /tmp/t.sh ok',
    ]);
    expect(await line('exec /tmp')).toBe('exec /tmp Permission denied');
    expect(await rank.exited).toMatchObject({ exitCode: 0, reason: null });
    // The write landed in the workspace on the host, owned by the rank's user.
    expect((await stat(join(real, 'out.txt'))).uid).toBe(65532);
  });

  describe('network isolation', () => {
    let listener: Server;
    let port = 0;
    let gateway = '';
    let lan: string | undefined;

    beforeAll(async () => {
      // A port the host really serves on every interface: a refused or unreachable connection below
      // means the sandbox, not a missing server.
      listener = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
      port = (listener.address() as { port: number }).port;
      // docker0's address: the gateway of Docker's default bridge, i.e. the host as containers see it.
      gateway = networkInterfaces()['docker0']?.find((a) => a.family === 'IPv4')?.address ?? '172.17.0.1';
      lan = Object.entries(networkInterfaces())
        .filter(([name]) => name !== 'docker0' && !name.startsWith('veth') && !name.startsWith('br-'))
        .flatMap(([, addrs]) => addrs ?? [])
        .find((a) => a.family === 'IPv4' && !a.internal)?.address;
    });
    afterAll(async () => {
      await new Promise((resolve) => listener?.close(resolve));
    });

    const targets = () => [
      '127.0.0.1:4222',
      '127.0.0.1:5432',
      `${gateway}:${port}`,
      `${gateway}:4222`,
      ...(lan === undefined ? [] : [`${lan}:${port}`]),
      '10.255.255.53:53',
    ];

    it('control: a container on Docker’s default bridge does reach the host through the gateway', async () => {
      const c = await engine.createContainer({
        Image: JOB_BASE_IMAGE,
        Cmd: ['python3', '-c', NET_PROBE, `${gateway}:${port}`],
        Labels: { [LABEL.managed]: 'true', [LABEL.edgeId]: edgeId },
      });
      try {
        await c.start();
        await c.wait();
        const logs = (await c.logs({ stdout: true, stderr: true })).toString('utf8');
        expect(logs).toContain(`net ${gateway}:${port} connected`);
      } finally {
        await c.remove({ force: true });
      }
    });

    it('a rank without a job network reaches nothing: not the host’s NATS/Postgres, the gateway or the LAN', async () => {
      const { rank, output, line } = await start(
        await launch({ cmd: ['python3', '-c', NET_PROBE, ...targets()] }),
      );
      expect(await line('ifaces')).toBe('ifaces lo');
      const results = output.items.filter((o) => o.line.startsWith('net ')).map((o) => o.line.split(' '));
      expect(results).toHaveLength(targets().length);
      for (const [, target, result] of results) {
        // Loopback is the container's own (nothing listens there); every other address has no route.
        if (target!.startsWith('127.')) expect(result, target).toBe('ECONNREFUSED');
        else expect(result, target).toBe('ENETUNREACH');
      }
      await rank.exited;
    });

    it('ranks in the job’s network sandbox share its namespace (and an interface moved there), nothing else', async () => {
      const jobId = `job-net-${seq}`;
      const sandbox = await runtime.jobSandbox(jobId);
      expect(await runtime.jobSandbox(jobId)).toEqual(sandbox);
      const info = await engine.getContainer(sandbox.id).inspect();
      expect(info.HostConfig).toMatchObject({
        NetworkMode: 'none',
        CapDrop: ['ALL'],
        ReadonlyRootfs: true,
        SecurityOpt: ['no-new-privileges:true'],
      });
      expect(info.Config.User).toBe('65532:65532');
      expect(info.State.Pid).toBe(sandbox.pid);

      // What the overlay does (JobOverlay.attach({ rankNetns: { pid } })), with a dummy link.
      const ifname = `gpn${process.pid % 100000}`;
      await exec('ip', ['link', 'add', `${ifname}h`, 'type', 'veth', 'peer', 'name', ifname]);
      onTestFinished(async () => {
        await exec('ip', ['link', 'del', `${ifname}h`]).catch(() => undefined);
      });
      await exec('ip', ['link', 'set', ifname, 'netns', String(sandbox.pid)]);

      const { rank, output, line } = await start(
        await launch({ jobId, netns: 'job', cmd: ['python3', '-c', NET_PROBE, ...targets()] }),
      );
      const container = await engine.getContainer(rank.id).inspect();
      expect(container.HostConfig.NetworkMode).toBe(`container:${sandbox.id}`);
      expect(await line('ifaces')).toBe(`ifaces ${[ifname, 'lo'].sort().join(',')}`);
      for (const [, target, result] of output.items
        .filter((o) => o.line.startsWith('net '))
        .map((o) => o.line.split(' ')))
        expect(result, target).not.toBe('connected');
      await rank.exited;

      await runtime.removeJobSandbox(jobId);
      await runtime.removeJobSandbox(jobId);
      // The host end goes with the sandbox's namespace (the kernel tears a namespace down
      // asynchronously after its last process exits).
      await waitFor(
        () =>
          exec('ip', ['link', 'show', `${ifname}h`]).then(
            () => false,
            () => true,
          ),
        { timeoutMs: 15_000, description: `${ifname}h removed with the sandbox's namespace` },
      );
      await expect(engine.getContainer(sandbox.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    });

    it('ranks of one job share the sandbox’s loopback (a rendezvous on 127.0.0.1 works)', async () => {
      const jobId = `job-pod-${seq}`;
      await runtime.jobSandbox(jobId);
      const server = await start(
        await launch({
          jobId,
          rank: 0,
          netns: 'job',
          cmd: [
            'python3',
            '-c',
            "import socket\ns = socket.create_server(('127.0.0.1', 29500))\nprint('listening', flush=True)\nc, _ = s.accept()\nprint('accepted', c.recv(16).decode(), flush=True)",
          ],
        }),
      );
      await server.line('listening');
      const client = await start(
        await launch({
          jobId,
          rank: 1,
          netns: 'job',
          cmd: [
            'python3',
            '-c',
            "import socket\nsocket.create_connection(('127.0.0.1', 29500)).sendall(b'rank1')",
          ],
        }),
      );
      expect(await server.line('accepted')).toBe('accepted rank1');
      expect(await client.rank.exited).toMatchObject({ exitCode: 0 });
      expect(await server.rank.exited).toMatchObject({ exitCode: 0 });
      await runtime.removeJobSandbox(jobId);
    });

    it('a rank asking for a job network without a sandbox is refused', async () => {
      const error = await runtime.start(await launch({ netns: 'job' })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RankStartError);
      expect((error as RankStartError).field).toBe('netns');
    });
  });

  describe('limits', () => {
    it('a fork bomb hits the pids limit, and the exit says so', async () => {
      const l = await launch({
        limits: { cpuMillicores: 1000, memoryBytes: 512 * MiB, pids: 24 },
        cmd: py(`
import signal
children = 0
try:
    while children < 1000:
        if os.fork() == 0:
            signal.pause()
            os._exit(0)
        children += 1
except BlockingIOError as e:
    print('fork failed after', children, os.strerror(e.errno), flush=True)
wait_release()
os._exit(3)
`),
      });
      const { rank, line, release } = await start(l);
      const failed = await line('fork failed');
      expect(failed).toMatch(/^fork failed after [0-9]+ Resource temporarily unavailable$/);
      expect(Number(failed.split(' ')[3])).toBeLessThan(24);
      await waitFor(async () => (await rank.pidsLimitHits()) > 0, {
        timeoutMs: 30_000,
        description: 'the pids cgroup to count a limit hit',
      });
      await release();
      expect(await rank.exited).toEqual({ exitCode: 3, signal: null, reason: 'pids-limit' });
    });

    it('the memory limit kills the rank, and the exit reports oom', async () => {
      const { rank } = await start(
        await launch({
          limits: { cpuMillicores: 1000, memoryBytes: 64 * MiB, pids: 64 },
          cmd: ['python3', '-c', 'hog = []\nwhile True:\n    hog.append(bytearray(8 * 1024 * 1024))'],
        }),
      );
      expect(await rank.exited).toEqual({ exitCode: 137, signal: 'SIGKILL', reason: 'oom' });
    });
  });

  describe('output, stop and cleanup', () => {
    it('streams stdout and stderr line by line, first line included', async () => {
      const { rank, output } = await start(
        await launch({
          cmd: [
            'python3',
            '-c',
            'import sys\nprint("one")\nprint("two", file=sys.stderr)\nsys.stdout.write("partial")',
          ],
        }),
      );
      expect(await rank.exited).toMatchObject({ exitCode: 0 });
      expect(output.items).toEqual(
        expect.arrayContaining([
          { stream: 'stdout', line: 'one' },
          { stream: 'stderr', line: 'two' },
          { stream: 'stdout', line: 'partial' },
        ]),
      );
    });

    it('stop: SIGTERM reaches the rank through tini; one that ignores it is killed after the grace', async () => {
      const polite = await start(await launch({ cmd: py(`print('ready', flush=True)\nwait_release()`) }));
      await polite.line('ready');
      expect(await polite.rank.stop(30_000)).toEqual({ exitCode: 143, signal: 'SIGTERM', reason: 'stopped' });
      expect(await polite.rank.stop(30_000)).toEqual({ exitCode: 143, signal: 'SIGTERM', reason: 'stopped' });

      const stubborn = await start(
        await launch({
          cmd: py(
            `import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\nwait_release()`,
          ),
        }),
      );
      await stubborn.line('ready');
      expect(await stubborn.rank.stop(300)).toEqual({ exitCode: 137, signal: 'SIGKILL', reason: 'stopped' });
      await expect(engine.getContainer(stubborn.rank.id).inspect()).rejects.toMatchObject({
        statusCode: 404,
      });
    });

    it('reapOrphans removes what an earlier run of this edge left (ranks and sandboxes), and only that', async () => {
      const orphanEdge = `${edgeId}-old`;
      const before = new DockerRuntime({
        edgeId: orphanEdge,
        docker: engine,
        allowedImages: ['gpunet/'],
        limits: { maxMemoryBytes: GiB, maxCpuMillicores: 1000 },
      });
      const { line } = await start(
        await launch({ cmd: py(`print('ready', flush=True)\nwait_release()`) }),
        before,
      );
      await line('ready');
      await before.jobSandbox('job-orphan');
      const mine = await start(await launch({ cmd: py(`print('ready', flush=True)\nwait_release()`) }));
      await mine.line('ready');

      // The edge restarts: a new runtime, nothing in memory.
      const after = new DockerRuntime({
        edgeId: orphanEdge,
        docker: engine,
        allowedImages: ['gpunet/'],
        limits: { maxMemoryBytes: GiB, maxCpuMillicores: 1000 },
      });
      expect(await after.reapOrphans(orphanEdge)).toBe(2);
      expect(await after.reapOrphans(orphanEdge)).toBe(0);
      const left = await engine.listContainers({
        all: true,
        filters: { label: [`${LABEL.edgeId}=${orphanEdge}`] },
      });
      expect(left).toEqual([]);
      // Another edge's rank is untouched.
      expect((await engine.getContainer(mine.rank.id).inspect()).State.Running).toBe(true);
      await mine.release();
      await mine.rank.exited;
    });
  });

  describe('image policy and devices', () => {
    it('refuses an image outside the allow-list, and a missing one with a clear error', async () => {
      const outside = await runtime.start(await launch({ image: 'postgres:16' })).catch((e: unknown) => e);
      expect(outside).toBeInstanceOf(RankStartError);
      expect((outside as RankStartError).message).toMatch(/matches none of the provider's allowed images/);
      const missing = await runtime
        .start(await launch({ image: 'gpunet/does-not-exist:1' }))
        .catch((e: unknown) => e);
      expect((missing as RankStartError).message).toBe(
        'image: gpunet/does-not-exist:1 is not present on this host, and pulling is off',
      );
      const pulling = new DockerRuntime({
        edgeId,
        docker: engine,
        allowedImages: ['*'],
        limits: { maxMemoryBytes: GiB, maxCpuMillicores: 1000 },
      });
      const unpullable = await pulling
        .start(await launch({ image: 'registry.invalid/gpunet/none:1' }))
        .catch((e: unknown) => e);
      expect(unpullable).toBeInstanceOf(RankStartError);
      expect((unpullable as RankStartError).message).toMatch(
        /^image: registry\.invalid\/gpunet\/none:1 is not present on this host and could not be pulled: /,
      );
    });

    it('NVIDIA GPUs on a host without the container toolkit: refused at start, nothing left behind', async () => {
      const support = await probeContainerGpuSupport(engine);
      if (support.nvidia.available) return; // a GPU host: the device request would succeed
      const h100 = parseNvidiaSmiQuery(fixture('nvidia', 'h100-sxm-8x.query.csv')).value;
      const l = await launch({ gpuUuids: [h100[0]!.uuid], gpuVendor: 'nvidia' });
      const error = await runtime.start(l).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RankStartError);
      expect(error).toMatchObject({ code: 'RUNTIME_UNAVAILABLE', field: 'gpuUuids' });
      expect((error as RankStartError).message).toMatch(/NVIDIA GPUs cannot be given to containers here/);
      const left = await engine.listContainers({
        all: true,
        filters: { label: [`${LABEL.edgeId}=${edgeId}`, `${LABEL.jobId}=${l.jobId}`] },
      });
      expect(left).toEqual([]);
    });

    it('AMD GPUs without /dev/kfd are refused before anything is created', async () => {
      const error = await runtime
        .start(await launch({ gpuUuids: ['AMD-0x5b5bc0a8e1b3a100'], gpuVendor: 'amd' }))
        .catch((e: unknown) => e);
      expect((error as RankStartError).field).toBe('gpuVendor');
    });
  });
});
