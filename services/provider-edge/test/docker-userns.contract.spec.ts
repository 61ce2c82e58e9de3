import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EventCollector, requireDocker, testNamespace, waitFor } from '@gpunet/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RankLaunch } from '../src/app/rank-runtime.port';
import { SANDBOX_UID } from '../src/infra/runtime/docker-sandbox';
import { DockerRuntime } from '../src/infra/runtime/docker.runtime';
import { probeDockerIsolation } from '../src/infra/runtime/isolation';
import { readUidRemap, remapsUsers } from '../src/infra/runtime/userns-remap';

/*
 * User namespaces on a real engine: a SECOND dockerd with `--userns-remap=default` (Docker creates
 * the user dockremap and its /etc/subuid range itself), its own data-root, exec-root, pidfile and
 * socket, started in a network namespace of its own (`unshare --net`), so the main daemon, its
 * bridge and the host's iptables are untouched. (`--bridge=none` is no substitute: a daemon started
 * with it deletes the host's docker0.) It gets the small image nats:2-alpine from the main daemon.
 * Needs root and `unshare`; skipped without.
 */
const docker = await requireDocker('provider-edge docker runtime under userns-remap');
const root = process.getuid?.() === 0;
const exec = promisify(execFile);
const hasUnshare = await exec('unshare', ['--version']).then(
  () => true,
  () => false,
);
const IMAGE = 'nats:2-alpine';
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** The `Uid:` line of /proc/<pid>/status, read on the host: real, effective, saved, filesystem. */
const hostUids = async (pid: number): Promise<number[]> =>
  /^Uid:\s+(.*)$/m
    .exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]!
    .split(/\s+/)
    .map(Number);

/** Host pids whose cgroup names the container. */
const hostPidsOf = async (containerId: string): Promise<number[]> => {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const cgroup = await readFile(`/proc/${entry}/cgroup`, 'utf8').catch(() => '');
    if (cgroup.includes(containerId)) pids.push(Number(entry));
  }
  return pids;
};

describe.skipIf(!docker || !root || !hasUnshare)(
  'Docker with userns-remap: container root is not host root',
  () => {
    const main = new Docker();
    const edgeId = testNamespace('userns').replace(/_/g, '-');
    let dir: string;
    let daemon: ChildProcess | undefined;
    let remapped: Docker;

    beforeAll(async () => {
      // Docker refuses a data-root its remapped root cannot traverse; mkdtemp makes 0700.
      dir = await mkdtemp('/tmp/gpunet-userns-');
      await chmod(dir, 0o711);
      await writeFile(join(dir, 'daemon.json'), '{}\n');
      const log = openSync(join(dir, 'dockerd.log'), 'a');
      const socket = join(dir, 'docker.sock');
      daemon = spawn(
        'unshare',
        [
          '--net',
          'dockerd',
          '--config-file',
          join(dir, 'daemon.json'),
          '--userns-remap=default',
          '--data-root',
          join(dir, 'data'),
          '--exec-root',
          join(dir, 'exec'),
          '--pidfile',
          join(dir, 'docker.pid'),
          '-H',
          `unix://${socket}`,
          '--iptables=false',
          '--ip-masq=false',
        ],
        { detached: true, stdio: ['ignore', log, log] },
      );
      closeSync(log);
      remapped = new Docker({ socketPath: socket });
      // The daemon may die at start (a bad flag, no dockremap): then its log says why.
      const exited = new Promise<'exited'>((resolve) => daemon!.once('exit', () => resolve('exited')));
      const answered = await Promise.race([
        exited,
        waitFor(
          () =>
            remapped.ping().then(
              () => 'answered' as const,
              () => null,
            ),
          { timeoutMs: 60_000, description: 'the userns-remap dockerd answers' },
        ),
      ]);
      if (answered === 'exited')
        throw new Error(
          `the userns-remap dockerd exited: ${(await readFile(join(dir, 'dockerd.log'), 'utf8')).slice(-2000)}`,
        );
      // The image, from the main daemon: nothing is pulled.
      const tar = await main.getImage(IMAGE).get();
      await new Promise<void>((resolve, reject) => {
        void remapped.loadImage(tar).then((res: NodeJS.ReadableStream) => {
          res.resume();
          res.on('end', resolve);
          res.on('error', reject);
        }, reject);
      });
      await remapped.getImage(IMAGE).inspect();
    }, 120_000);

    afterAll(async () => {
      if (remapped) {
        const left = await remapped.listContainers({ all: true }).catch(() => []);
        await Promise.all(
          left.map((c) =>
            remapped
              .getContainer(c.Id)
              .remove({ force: true })
              .catch(() => undefined),
          ),
        );
      }
      if (daemon?.pid !== undefined && daemon.exitCode === null) {
        const gone = new Promise((resolve) => daemon!.once('exit', resolve));
        daemon.kill('SIGTERM');
        await gone;
      }
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 60_000);

    it('the daemon says it remaps users, and to which host uids', async () => {
      const info = await remapped.info();
      expect(remapsUsers(info)).toBe(true);
      const remap = await readUidRemap(info);
      expect(remap).not.toBeNull();
      expect(remap!.uid).toBeGreaterThan(0);
      // The main daemon of this host does not remap: the contrast below is real.
      expect(remapsUsers(await main.info())).toBe(false);
      // What the edge reports of each engine (ADR 0072).
      expect(await probeDockerIsolation(remapped, null)).toMatchObject({
        level: 'container-userns',
        userNamespaces: true,
      });
      expect((await probeDockerIsolation(main, null)).level).toMatch(/^(container|gvisor)$/);
    });

    it('a process that is root in the container is an unprivileged uid on the host', async () => {
      const remap = (await readUidRemap(await remapped.info()))!;
      const uidsOfRoot = async (engine: Docker): Promise<{ inside: string; host: number[] }> => {
        const container = await engine.createContainer({
          Image: IMAGE,
          User: '0:0',
          Entrypoint: ['sh', '-c'],
          Cmd: ['cat /proc/self/status; exec sleep 600'],
          HostConfig: { NetworkMode: 'none' },
          Labels: { 'org.gpunet.test': edgeId },
        });
        try {
          await container.start();
          const inside = await waitFor(
            async () =>
              /^Uid:\s+([0-9\s]+?)\s*$/m.exec((await container.logs({ stdout: true })).toString('utf8'))?.[1],
            { timeoutMs: 30_000, description: 'the container prints its Uid line' },
          );
          const { State } = await container.inspect();
          return { inside: inside.split(/\s+/).join(' '), host: await hostUids(State.Pid) };
        } finally {
          await container.remove({ force: true });
        }
      };
      const remappedRoot = await uidsOfRoot(remapped);
      expect(remappedRoot.inside).toBe('0 0 0 0');
      expect(remappedRoot.host).toEqual([remap.uid, remap.uid, remap.uid, remap.uid]);
      expect(remap.uid).toBeGreaterThanOrEqual(65536);
      // The same container on the main daemon (no remapping): its root is the host's root.
      const plainRoot = await uidsOfRoot(main);
      expect(plainRoot).toEqual({ inside: '0 0 0 0', host: [0, 0, 0, 0] });
    });

    it('the edge’s docker runtime runs a rank there: its workspace belongs to the remapped 65532', async () => {
      const remap = (await readUidRemap(await remapped.info()))!;
      const runtime = new DockerRuntime({
        edgeId,
        docker: remapped,
        allowedImages: ['nats:'],
        limits: { maxMemoryBytes: 2 * GiB, maxCpuMillicores: 2000 },
        pull: false,
        pidsPollMs: 200,
      });
      expect(await runtime.unavailable()).toBeNull();
      // Laid out like the edge's: data dir / workspaces / <job> / rank-0, every level 0700 root.
      const workspace = join(dir, 'edge', 'workspaces', 'job-1', 'rank-0');
      await mkdir(workspace, { recursive: true, mode: 0o700 });
      const l: RankLaunch = {
        jobId: 'job-1',
        attempt: 1,
        rank: 0,
        image: IMAGE,
        cmd: [
          'sh',
          '-c',
          'cat /proc/self/status; echo checkpoint > /scratch/out && echo wrote; ' +
            'while [ ! -e /scratch/release ]; do sleep 0.05; done',
        ],
        entrypoint: null,
        env: { GPUNET_WORKSPACE: workspace },
        workspace,
        workingDir: workspace,
        gpuUuids: [],
        gpuVendor: null,
        limits: { cpuMillicores: 500, memoryBytes: 64 * MiB, pids: 32 },
        netns: null,
        labels: { 'org.gpunet.test': edgeId },
      };
      const rank = await runtime.start(l);
      const output = new EventCollector<string>('userns rank output');
      rank.onOutput((_s, line) => output.push(line));
      expect(await output.waitFor((o) => o.startsWith('Uid:'), { timeoutMs: 30_000 })).toMatch(
        /^Uid:\s+65532\s+65532\s+65532\s+65532$/,
      );
      await output.waitFor((o) => o === 'wrote', { timeoutMs: 30_000 });
      // Every process of the rank's container (tini and the rank), seen from the host.
      const hostUid = remap.uid + SANDBOX_UID;
      // The rank's wait loop forks short-lived `sleep`s: a pid gone by the time it is read is skipped.
      const seen = (
        await Promise.all((await hostPidsOf(rank.id)).map((pid) => hostUids(pid).catch(() => null)))
      ).filter((uids) => uids !== null);
      // tini and the rank's shell at least.
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const uids of seen) expect(uids).toEqual([hostUid, hostUid, hostUid, hostUid]);
      expect((await stat(workspace)).uid).toBe(hostUid);
      const out = await stat(join(workspace, 'out'));
      expect({ uid: out.uid, gid: out.gid }).toEqual({ uid: hostUid, gid: remap.gid + SANDBOX_UID });
      expect(await readFile(join(workspace, 'out'), 'utf8')).toBe('checkpoint\n');
      await writeFile(join(workspace, 'release'), '');
      expect(await rank.exited).toEqual({ exitCode: 0, signal: null, reason: null });
      await runtime.reapOrphans(edgeId);
    });
  },
);
