import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JobOverlay, kernelWireGuardAvailable } from '@gpunet/overlay';
import { EventCollector, requireDocker, testNamespace } from '@gpunet/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RankLaunch } from '../src/app/rank-runtime.port';
import { JOB_BASE_IMAGE } from '../src/infra/runtime/docker-sandbox';
import { DockerRuntime } from '../src/infra/runtime/docker.runtime';
import { warnSkipped } from './support/loop';

/*
 * What a containerized rank can reach, on a real engine and a real job overlay: two edges' docker
 * runtimes on this machine (A and B) hold one job's network sandboxes, joined by the overlay's
 * own code (`JobOverlay`, wireguard-go or kernel WireGuard, a direct path over 127.0.0.1) exactly as
 * the edge's overlay agent attaches it. A network namespace behind a veth stands in for a machine on
 * the provider's LAN, serving TCP; the test process serves TCP on every host address and on an
 * abstract unix socket (the host's services). Every target is first shown reachable from the host,
 * so a failure from the rank is the sandbox's doing, not a missing server.
 */
const exec = promisify(execFile);
const MiB = 1024 ** 2;

const docker = await requireDocker('provider-edge rank egress');
const problem = async (): Promise<string | null> => {
  if (process.getuid?.() !== 0) return 'not root (network namespaces and WireGuard need it)';
  for (const tool of ['ip', 'nsenter'])
    if (
      await exec('which', [tool]).then(
        () => false,
        () => true,
      )
    )
      return `${tool} is not installed`;
  const userspace = await exec('which', ['wireguard-go']).then(
    () => true,
    () => false,
  );
  if (!userspace && !(await kernelWireGuardAvailable()))
    return 'no WireGuard (neither wireguard-go on PATH nor the kernel module)';
  return null;
};
const missing = docker ? await problem() : 'Docker does not answer';
if (docker && missing !== null) warnSkipped('the rank egress suite', missing);

/**
 * Connects to every target at once (3 s each) and prints `net <target> <connected | errno name |
 * timeout>`; a target starting with `@` is an abstract unix socket.
 */
const PROBE = `
import errno, socket, sys, threading
lock = threading.Lock()
def probe(target):
    if target.startswith('@'):
        s, addr = socket.socket(socket.AF_UNIX), '\\0' + target[1:]
    else:
        host, port = target.rsplit(':', 1)
        s, addr = socket.socket(), (host, int(port))
    s.settimeout(3)
    try:
        s.connect(addr)
        result = 'connected'
    except socket.timeout:
        result = 'timeout'
    except OSError as e:
        result = errno.errorcode.get(e.errno, str(e))
    with lock:
        print('net', target, result, flush=True)
threads = [threading.Thread(target=probe, args=(t,)) for t in sys.argv[1:]]
for t in threads: t.start()
for t in threads: t.join()
print('ifaces', ','.join(sorted(n for _, n in socket.if_nameindex())), flush=True)
`;

/** The same connect from the test process (the host's view of a target). */
const connectFromHost = (target: string): Promise<string> =>
  new Promise((resolve) => {
    const socket = target.startsWith('@')
      ? connect({ path: `\0${target.slice(1)}` })
      : connect({ host: target.slice(0, target.lastIndexOf(':')), port: Number(target.split(':').pop()) });
    socket.setTimeout(3_000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? String(e)));
  });

describe.skipIf(!docker || missing !== null)(
  'a containerized rank reaches its overlay peers and nothing else',
  () => {
    const engine = new Docker();
    const tag = `${process.pid % 100_000}`;
    const jobId = `job-egress-${tag}`;
    const edgeA = testNamespace('egressa').replace(/_/g, '-');
    const edgeB = testNamespace('egressb').replace(/_/g, '-');
    const network = '100.96.213.0/24';
    const overlayA = '100.96.213.1';
    const overlayB = '100.96.213.2';
    // A LAN stand-in in the benchmarking range (RFC 2544), which no real network here uses.
    const subnet = `198.18.${Number(tag) % 250}`;
    const lanHostSide = `${subnet}.1`;
    const lanMachine = `${subnet}.2`;
    const lanNs = `gpnlan${tag}`;
    const lanLink = `gpl${tag}`;
    const abstract = `@gpunet-egress-${tag}`;

    let runtimeA: DockerRuntime;
    let runtimeB: DockerRuntime;
    const overlays: JobOverlay[] = [];
    let lanServer: ChildProcess | undefined;
    const hostServers: Server[] = [];
    let hostPort = 0;
    let gateway = '';
    let hostLan: string | undefined;
    let seq = 0;
    let workspace = '';

    const runtime = (edgeId: string) =>
      new DockerRuntime({
        edgeId,
        docker: engine,
        allowedImages: ['gpunet/'],
        limits: { maxMemoryBytes: 1024 * MiB, maxCpuMillicores: 2000, maxPids: 256 },
        pull: false,
      });

    const launch = (cmd: string[]): RankLaunch => {
      seq += 1;
      return {
        jobId,
        attempt: seq,
        rank: 0,
        image: JOB_BASE_IMAGE,
        cmd,
        entrypoint: null,
        env: {},
        // No quota here: the network is what is tested.
        workspace,
        workingDir: workspace,
        gpuUuids: [],
        gpuVendor: null,
        limits: { cpuMillicores: 500, memoryBytes: 256 * MiB, pids: 64 },
        netns: 'job',
        labels: {},
      };
    };

    /** Runs the probe in a rank of edge A's sandbox; the results by target. */
    const probeFromRank = async (targets: readonly string[]) => {
      const rank = await runtimeA.start(launch(['python3', '-c', PROBE, ...targets]));
      const output = new EventCollector<string>('probe output');
      rank.onOutput((_s, line) => output.push(line));
      await rank.exited;
      await output.waitFor((l) => l.startsWith('ifaces'), { timeoutMs: 30_000 });
      const results = new Map(
        output.items.filter((l) => l.startsWith('net ')).map((l) => [l.split(' ')[1]!, l.split(' ')[2]!]),
      );
      return { results, ifaces: output.items.find((l) => l.startsWith('ifaces'))! };
    };

    beforeAll(async () => {
      await engine.getImage(JOB_BASE_IMAGE).inspect();
      workspace = await mkdtemp(join(tmpdir(), 'gpunet-egress-'));
      runtimeA = runtime(edgeA);
      runtimeB = runtime(edgeB);

      // The job's overlay between the two edges' sandboxes, attached as the edge's overlay agent does.
      const sandboxes = [await runtimeA.jobSandbox(jobId), await runtimeB.jobSandbox(jobId)];
      for (const [i, sandbox] of sandboxes.entries())
        overlays.push(
          await JobOverlay.attach({
            jobId,
            networkCidr: network,
            address: i === 0 ? overlayA : overlayB,
            relays: [],
            rankNetns: { pid: sandbox.pid },
            hostAddresses: ['127.0.0.1'],
          }),
        );
      const peers = overlays.map((o) => ({
        edgeId: null,
        publicKey: o.endpoint.publicKey,
        address: o.endpoint.address,
        candidates: o.endpoint.candidates,
      }));
      const reports = await Promise.all(
        overlays.map((o) => o.connectPeers(peers, { windowMs: 2_000, measureThroughput: false })),
      );
      for (const report of reports) expect(report.peers[0]).toMatchObject({ path: 'direct' });

      // A machine on the provider's LAN: its own namespace behind a veth, serving TCP on 8080.
      await exec('ip', ['netns', 'add', lanNs]);
      await exec('ip', ['link', 'add', `${lanLink}h`, 'type', 'veth', 'peer', 'name', `${lanLink}n`]);
      await exec('ip', ['link', 'set', `${lanLink}n`, 'netns', lanNs]);
      await exec('ip', ['addr', 'add', `${lanHostSide}/30`, 'dev', `${lanLink}h`]);
      await exec('ip', ['link', 'set', `${lanLink}h`, 'up']);
      await exec('ip', ['-n', lanNs, 'addr', 'add', `${lanMachine}/30`, 'dev', `${lanLink}n`]);
      await exec('ip', ['-n', lanNs, 'link', 'set', `${lanLink}n`, 'up']);
      await exec('ip', ['-n', lanNs, 'link', 'set', 'lo', 'up']);
      lanServer = spawn(
        'ip',
        [
          'netns',
          'exec',
          lanNs,
          process.execPath,
          '-e',
          "require('node:net').createServer((s) => s.end()).listen(8080, '0.0.0.0', () => console.log('ready'))",
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve, reject) => {
        lanServer!.stdout!.once('data', () => resolve());
        lanServer!.once('exit', (code) => reject(new Error(`the LAN stand-in's server exited ${code}`)));
      });

      // The host's services: TCP on every address, and an abstract unix socket.
      const tcp = createServer((s) => s.end());
      await new Promise<void>((resolve) => tcp.listen(0, '0.0.0.0', resolve));
      hostPort = (tcp.address() as { port: number }).port;
      const unix = createServer((s) => s.end());
      await new Promise<void>((resolve) => unix.listen(`\0${abstract.slice(1)}`, resolve));
      hostServers.push(tcp, unix);
      gateway = networkInterfaces()['docker0']?.find((a) => a.family === 'IPv4')?.address ?? '172.17.0.1';
      hostLan = Object.entries(networkInterfaces())
        .filter(([name]) => !/^(docker|veth|br-|gp|lo)/.test(name))
        .flatMap(([, addrs]) => addrs ?? [])
        .find((a) => a.family === 'IPv4' && !a.internal)?.address;
    }, 120_000);

    afterAll(async () => {
      for (const o of overlays) await o.detach().catch(() => undefined);
      await runtimeA?.reapOrphans(edgeA);
      await runtimeB?.reapOrphans(edgeB);
      lanServer?.kill('SIGKILL');
      for (const s of hostServers) await new Promise((resolve) => s.close(resolve));
      // The veth goes with the namespace.
      await exec('ip', ['netns', 'del', lanNs]).catch(() => undefined);
      await exec('ip', ['link', 'del', `${lanLink}h`]).catch(() => undefined);
      if (workspace) await rm(workspace, { recursive: true, force: true });
    }, 60_000);

    /** The provider's LAN and the host's services, as a rank would address them. */
    const forbidden = () => [
      `${lanMachine}:8080`,
      `${lanHostSide}:${hostPort}`,
      `${gateway}:${hostPort}`,
      ...(hostLan === undefined ? [] : [`${hostLan}:${hostPort}`]),
      `127.0.0.1:${hostPort}`,
      abstract,
      '1.1.1.1:443',
    ];

    it('control: from the host, the LAN machine and the host’s services all answer', async () => {
      for (const target of forbidden().filter((t) => t !== '1.1.1.1:443'))
        expect(await connectFromHost(target), target).toBe('connected');
    });

    it('real overlay (WireGuard between two edges’ job sandboxes): reaches its peer; not the LAN stand-in (netns + veth) nor the host’s services', async () => {
      const listener = await runtimeB.start(
        launch([
          'python3',
          '-c',
          `import socket\ns = socket.create_server(('${overlayB}', 9000))\nprint('listening', flush=True)\nwhile True:\n    c, _ = s.accept()\n    c.sendall(b'peer')\n    c.close()`,
        ]),
      );
      const heard = new EventCollector<string>('peer output');
      listener.onOutput((_s, line) => heard.push(line));
      await heard.waitFor((l) => l === 'listening', { timeoutMs: 30_000 });
      try {
        const { results, ifaces } = await probeFromRank([`${overlayB}:9000`, ...forbidden()]);
        // The sandbox's namespace: loopback and the overlay, nothing else.
        expect(ifaces).toBe('ifaces gpunet0,lo');
        expect(results.get(`${overlayB}:9000`)).toBe('connected');
        for (const target of forbidden()) {
          // Its loopback and abstract sockets are the namespace's own: nothing of the host's is there.
          if (target.startsWith('127.') || target.startsWith('@'))
            expect(results.get(target), target).toBe('ECONNREFUSED');
          // No route but the job network's.
          else expect(results.get(target), target).toBe('ENETUNREACH');
        }
      } finally {
        await listener.stop(1_000);
      }
    }, 90_000);

    it('even with a default route into gpunet0 (what CAP_NET_ADMIN would allow), WireGuard carries nothing but peer addresses', async () => {
      const sandbox = await runtimeA.jobSandbox(jobId);
      const inSandbox = ['nsenter', `--net=/proc/${sandbox.pid}/ns/net`, 'ip'];
      await exec(inSandbox[0]!, [...inSandbox.slice(1), 'route', 'add', 'default', 'dev', 'gpunet0']);
      try {
        const targets = forbidden().filter((t) => !t.startsWith('127.') && !t.startsWith('@'));
        const { results } = await probeFromRank(targets);
        // Cryptokey routing: no peer's allowed IP covers these, so WireGuard drops what the rank sends.
        for (const target of targets) expect(results.get(target), target).not.toBe('connected');
      } finally {
        await exec(inSandbox[0]!, [...inSandbox.slice(1), 'route', 'del', 'default', 'dev', 'gpunet0']);
      }
    }, 90_000);
  },
);
