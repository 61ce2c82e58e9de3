/*
 * The docker rank runtime. Each rank is one container created through the Docker Engine API
 * (dockerode) with the sandbox of docker-sandbox.ts: no capabilities, no-new-privileges, Docker's
 * default seccomp profile, read-only root with a tmpfs /tmp, user 65532, pids/memory/CPU limits,
 * no network (or the job's network sandbox), exactly the reserved GPUs, and the rank's workspace as
 * the only host path — a file system of its own, of the policy's `disk.workspace_per_rank`. docs/security.md says what this protects the provider from, and what not.
 */
import { lchown, readFile, realpath } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { PassThrough, type Readable } from 'node:stream';
import Docker from 'dockerode';
import {
  type JobNetworkProvider,
  type RankExit,
  type RankLaunch,
  type RankRuntime,
  RankStartError,
  type RunningRank,
} from '../../app/rank-runtime.port';
import type { SandboxRuntime } from '../../domain/policy/policy';
import { imageAllowed } from '../../domain/policy/reservation.check';
import { type ContainerGpuSupport, probeContainerGpuSupport } from './docker-host';
import {
  type AmdDevices,
  JOB_BASE_IMAGE,
  LABEL,
  NO_AMD_DEVICES,
  rankContainerOptions,
  refuseGpusOnRunsc,
  type SandboxLimits,
  SANDBOX_UID,
  sandboxContainerOptions,
} from './docker-sandbox';
import { hostIds, readUidRemap, type RemapInfo, type UidRemap } from './userns-remap';
import { mountQuotaWorkspace } from './workspace-quota';

export type DockerRuntimeLog = (
  level: 'debug' | 'info' | 'warn' | 'error',
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface DockerRuntimeOptions {
  /** The edge's id: every container carries it (`gpunet.edge`, `RANK_LABELS.edge`) so `reapOrphans` finds them. */
  readonly edgeId: string;
  /** Default: `new Docker()` (honours `DOCKER_HOST`, else /var/run/docker.sock). */
  readonly docker?: Docker;
  /** The provider's image allow-list (policy `images.allow`: prefixes, or `*`). */
  readonly allowedImages: readonly string[];
  readonly limits: SandboxLimits;
  /** AMD device files of this host (`readAmdDevices(inventory)`); default none. */
  readonly amd?: AmdDevices;
  /**
   * The host's GPUs are simulated (a declared inventory): ranks get no GPU device, since there is
   * none, and find their reserved ids in `GPUNET_SIMULATED_GPUS` (`simulatedGpuAccess`). Default false.
   */
  readonly simulatedGpus?: boolean;
  /**
   * Policy `sandbox.runtime`: `runc` (the daemon's default runtime) or `runsc` (gVisor; the daemon
   * must list it, and ranks with GPUs are refused). Default `runc`.
   */
  readonly ociRuntime?: SandboxRuntime;
  /** Pull an allowed image that is not present. Default true; offline hosts fail fast either way. */
  readonly pull?: boolean;
  /** Longest a pull may take. Default 15 min. */
  readonly pullTimeoutMs?: number;
  /** Image of the per-job network sandbox. Default `gpunet/job-base:torch-cpu`. */
  readonly sandboxImage?: string;
  /** How often a running rank's pids cgroup is read for limit hits. Default 1 000 ms. */
  readonly pidsPollMs?: number;
  /** How long a rank's exit is waited for while the engine does not answer. Default 5 min. */
  readonly engineLossMs?: number;
  /**
   * Size of each rank's workspace file system (policy `disk.workspace_per_rank`), mounted by
   * `prepareWorkspace`; null: the workspace stays a plain directory of the host's disk (tests of
   * other parts of the sandbox). Default null; `createDockerRuntime` sets it from the policy.
   */
  readonly workspaceBytes?: number | null;
  /** The Docker daemon's pid file (its mount namespace must be the edge's). Default /var/run/docker.pid. */
  readonly dockerPidFile?: string;
  /** Where cgroups are mounted. Default /sys/fs/cgroup. */
  readonly cgroupRoot?: string;
  readonly log?: DockerRuntimeLog;
}

/** The image a rank runs, as resolved on this host and recorded on its container. */
export interface ResolvedImage {
  /** As the spec named it (`gpunet/job-base:torch-cpu`). */
  readonly ref: string;
  /** Content id (`sha256:…`): the container is created from this, so a moved tag changes nothing. */
  readonly id: string;
  /** `name@sha256:…` from a registry, when the image came from one; null for local builds. */
  readonly digest: string | null;
}

/** A running rank container; `image` records exactly what runs. */
export interface DockerRunningRank extends RunningRank {
  readonly image: ResolvedImage;
  /** How often the rank's fork/clone failed on its pids limit so far (reads the cgroup now). */
  pidsLimitHits(): Promise<number>;
}

/** A job's network sandbox: the overlay attaches to `pid`'s network namespace. */
export interface JobSandbox {
  readonly id: string;
  readonly pid: number;
}

const MAX_LINE = 64 * 1024;
const MAX_BUFFERED_LINES = 2_000;

const statusOf = (error: unknown): number | undefined =>
  typeof error === 'object' && error !== null && 'statusCode' in error
    ? (error as { statusCode?: number }).statusCode
    : undefined;

/** The engine's own message (`{"message": …}`), not dockerode's wrapping of it. */
const messageOf = (error: unknown): string => {
  if (typeof error === 'object' && error !== null && 'json' in error) {
    const json = (error as { json?: unknown }).json;
    if (typeof json === 'object' && json !== null && 'message' in json) return String(json.message);
  }
  return error instanceof Error ? error.message : String(error);
};

const SIGNAL_NAMES = new Map<number, string>(
  Object.entries(osConstants.signals).map(([name, num]) => [num, name]),
);

/** Splits a byte stream into lines (a line longer than 64 KiB is cut), flushing the rest at the end. */
const lines = (stream: Readable, emit: (line: string) => void): Promise<void> =>
  new Promise((resolve) => {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        emit(pending.slice(0, nl).replace(/\r$/, ''));
        pending = pending.slice(nl + 1);
      }
      while (pending.length > MAX_LINE) {
        emit(pending.slice(0, MAX_LINE));
        pending = pending.slice(MAX_LINE);
      }
    });
    const done = () => {
      if (pending !== '') emit(pending);
      pending = '';
      resolve();
    };
    stream.on('end', done);
    stream.on('close', done);
    stream.on('error', done);
  });

export class DockerRuntime implements RankRuntime {
  readonly kind = 'docker' as const;
  private readonly docker: Docker;
  private readonly log: DockerRuntimeLog;
  private readonly sandboxes = new Map<string, Promise<JobSandbox>>();
  private gpuSupport: Promise<ContainerGpuSupport> | undefined;
  private uidRemap: Promise<UidRemap | null> | undefined;
  /** Each job's ranks share the namespace of its sandbox container; the overlay attaches there. */
  readonly jobNetworks: JobNetworkProvider = {
    acquire: async (jobId) => ({ pid: (await this.jobSandbox(jobId)).pid }),
    release: (jobId) => this.removeJobSandbox(jobId),
  };

  constructor(private readonly options: DockerRuntimeOptions) {
    this.docker = options.docker ?? new Docker();
    this.log = options.log ?? (() => undefined);
  }

  /** Mounts the rank's own file system of `workspaceBytes` on its workspace (see workspace-quota.ts). */
  async prepareWorkspace(workspace: string): Promise<void> {
    const bytes = this.options.workspaceBytes ?? null;
    if (bytes === null) return;
    await mountQuotaWorkspace(workspace, bytes, {
      ...(this.options.dockerPidFile === undefined ? {} : { dockerPidFile: this.options.dockerPidFile }),
    });
  }

  async unavailable(): Promise<string | null> {
    try {
      await this.docker.ping();
    } catch (e) {
      return `the Docker engine does not answer: ${messageOf(e)}`;
    }
    if (this.options.ociRuntime !== 'runsc') return null;
    try {
      const info = (await this.docker.info()) as { Runtimes?: Record<string, unknown> };
      const runtimes = Object.keys(info.Runtimes ?? {});
      return runtimes.includes('runsc')
        ? null
        : `policy sandbox.runtime is runsc, but the Docker daemon has no runtime runsc (it has ${runtimes.join(', ')}); ` +
            'install gVisor and register it in /etc/docker/daemon.json (deploy/images/ensure-docker.sh does both)';
    } catch (e) {
      return `the Docker engine does not answer: ${messageOf(e)}`;
    }
  }

  /** The daemon's user remapping (`userns-remap`), read once; null when it remaps nothing. */
  private remap(): Promise<UidRemap | null> {
    if (this.uidRemap === undefined) {
      const remap = this.docker.info().then((info: RemapInfo) => readUidRemap(info));
      this.uidRemap = remap;
      // A failed read is not remembered: the next rank asks the daemon again.
      remap.catch(() => {
        if (this.uidRemap === remap) this.uidRemap = undefined;
      });
    }
    return this.uidRemap;
  }

  /**
   * Checks `ref` against the provider's allow-list, then finds it locally or pulls it. The result
   * pins the content id; the registry digest, when there is one, is recorded too.
   */
  async resolveImage(ref: string): Promise<ResolvedImage> {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9._/:@-]{0,254}$/.test(ref))
      throw new RankStartError(
        `image: ${JSON.stringify(ref.slice(0, 80))} is not an image reference`,
        'image',
      );
    if (!imageAllowed(this.options.allowedImages, ref))
      throw new RankStartError(
        `image: ${ref} matches none of the provider's allowed images (${this.options.allowedImages.join(', ')})`,
        'image',
      );
    let info = await this.inspectImage(ref);
    if (info === null) {
      if (this.options.pull === false)
        throw new RankStartError(`image: ${ref} is not present on this host, and pulling is off`, 'image');
      try {
        await this.pull(ref);
      } catch (e) {
        throw new RankStartError(
          `image: ${ref} is not present on this host and could not be pulled: ${messageOf(e)}`,
          'image',
        );
      }
      info = await this.inspectImage(ref);
      if (info === null) throw new RankStartError(`image: ${ref} was pulled but cannot be found`, 'image');
    }
    const name = ref.split('@')[0]!.replace(/:[^/:]+$/, '');
    const digest =
      info.RepoDigests.find((d) => d.startsWith(`${name}@`)) ??
      (ref.includes('@') ? ref : null) ??
      info.RepoDigests[0] ??
      null;
    return { ref, id: info.Id, digest };
  }

  private async inspectImage(ref: string): Promise<Docker.ImageInspectInfo | null> {
    try {
      return await this.docker.getImage(ref).inspect();
    } catch (e) {
      const status = statusOf(e);
      if (status === 404) return null;
      throw new RankStartError(
        `image: cannot inspect ${ref}: ${messageOf(e)}`,
        'image',
        status === undefined ? 'RUNTIME_UNAVAILABLE' : 'START_FAILED',
      );
    }
  }

  private async pull(ref: string): Promise<void> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.options.pullTimeoutMs ?? 15 * 60_000);
    try {
      const stream = (await this.docker.pull(ref, { abortSignal: abort.signal })) as Readable;
      await new Promise<void>((resolve, reject) => {
        this.docker.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
          const failed = events?.find((e) => e.error !== undefined);
          if (err) reject(err);
          else if (failed) reject(new Error(failed.error));
          else resolve();
        });
      });
      this.log('info', 'image pulled', { image: ref });
    } finally {
      clearTimeout(timer);
    }
  }

  async start(launch: RankLaunch): Promise<DockerRunningRank> {
    if (launch.image === null) throw new RankStartError('image: the docker runtime needs an image', 'image');
    refuseGpusOnRunsc(this.options.ociRuntime ?? 'runc', this.options.simulatedGpus === true, launch);
    if (launch.gpuVendor === 'nvidia' && launch.gpuUuids.length > 0 && this.options.simulatedGpus !== true) {
      this.gpuSupport ??= probeContainerGpuSupport(this.docker);
      const support = await this.gpuSupport;
      if (!support.nvidia.available)
        throw new RankStartError(
          `gpuUuids: NVIDIA GPUs cannot be given to containers here: ${support.nvidia.detail}`,
          'gpuUuids',
          'RUNTIME_UNAVAILABLE',
        );
    }
    const image = await this.resolveImage(launch.image);
    // The bind mount and the working directory must agree on one spelling of the workspace (the agent
    // resolves the working directory through symlinks).
    const workspace = await realpath(launch.workspace).catch(() => null);
    if (workspace === null)
      throw new RankStartError(`workspace: ${launch.workspace} does not exist`, 'workspace');
    const hostPath = (value: string): string =>
      value === launch.workspace || value.startsWith(`${launch.workspace}/`)
        ? workspace + value.slice(launch.workspace.length)
        : value;
    const resolved: RankLaunch = {
      ...launch,
      workspace,
      workingDir: hostPath(launch.workingDir),
      env: Object.fromEntries(Object.entries(launch.env).map(([k, v]) => [k, hostPath(v)])),
    };
    let network: { mode: 'none' } | { mode: 'container'; id: string } = { mode: 'none' };
    if (launch.netns !== null) {
      const sandbox = await this.existingSandbox(launch.jobId);
      if (sandbox === null)
        throw new RankStartError(
          `netns: job ${launch.jobId} has no network sandbox on this host; create it (jobSandbox) and attach the overlay first`,
          'netns',
        );
      network = { mode: 'container', id: sandbox.id };
    }
    const create = rankContainerOptions({
      edgeId: this.options.edgeId,
      launch: resolved,
      image,
      network,
      limits: this.options.limits,
      amd: this.options.amd ?? NO_AMD_DEVICES,
      simulatedGpus: this.options.simulatedGpus === true,
      ociRuntime: this.options.ociRuntime ?? 'runc',
    });
    // The workspace and the directories down to the working directory belong to the rank's user
    // (the agent created them as the edge's, 0700) — as the host sees that user: under userns-remap
    // 65532 in the container is the remapped root's uid + 65532 on the host. Not recursive: files of
    // earlier attempts are the rank's already, and a link planted there must not make the edge chown
    // anything else.
    if (process.getuid?.() === 0) {
      let owner: { uid: number; gid: number };
      try {
        owner = hostIds(await this.remap(), SANDBOX_UID, SANDBOX_UID);
      } catch (e) {
        throw new RankStartError(
          `workspace: cannot tell whom to give it: ${e instanceof Error ? e.message : String(e)}`,
          'workspace',
        );
      }
      let dir = workspace;
      const below = resolved.workingDir
        .slice(workspace.length)
        .split('/')
        .filter((p) => p !== '');
      for (const part of ['', ...below]) {
        dir = part === '' ? dir : `${dir}/${part}`;
        await lchown(dir, owner.uid, owner.gid).catch(() => undefined);
      }
    }
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer(create);
    } catch (e) {
      // No HTTP status: the engine did not answer at all.
      const code = statusOf(e) === undefined ? 'RUNTIME_UNAVAILABLE' : 'START_FAILED';
      throw new RankStartError(`cannot create the container: ${messageOf(e)}`, null, code);
    }
    try {
      // Attached before start, so the first line is not lost.
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const rank = new ContainerRank(container, image, stream, this.docker, this.options, this.log);
      await container.start();
      await rank.started();
      this.log('info', 'rank container started', {
        jobId: launch.jobId,
        rank: launch.rank,
        attempt: launch.attempt,
        container: container.id,
        image: image.ref,
        imageId: image.id,
        imageDigest: image.digest,
      });
      return rank;
    } catch (e) {
      await container.remove({ force: true }).catch(() => undefined);
      if (e instanceof RankStartError) throw e;
      throw new RankStartError(`cannot start the container: ${messageOf(e)}`, null);
    }
  }

  /**
   * The job's network sandbox on this host, created on first call (idempotent): a container with no
   * network whose namespace the job's overlay interface is moved into (`JobOverlay.attach({ rankNetns:
   * { pid } })`). Ranks of the job started with a non-null `netns` join it.
   */
  jobSandbox(jobId: string): Promise<JobSandbox> {
    let sandbox = this.sandboxes.get(jobId);
    if (sandbox === undefined) {
      sandbox = this.createSandbox(jobId);
      this.sandboxes.set(jobId, sandbox);
      sandbox.catch(() => this.sandboxes.delete(jobId));
    }
    return sandbox;
  }

  private async existingSandbox(jobId: string): Promise<JobSandbox | null> {
    const known = this.sandboxes.get(jobId);
    if (known !== undefined) return known.catch(() => null);
    return null;
  }

  private async createSandbox(jobId: string): Promise<JobSandbox> {
    const image = this.options.sandboxImage ?? JOB_BASE_IMAGE;
    if ((await this.inspectImage(image)) === null)
      throw new RankStartError(
        `netns: the network sandbox image ${image} is not present (deploy/images/ensure-docker.sh builds it)`,
        'netns',
      );
    const create = sandboxContainerOptions({ edgeId: this.options.edgeId, jobId, image });
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer(create);
    } catch (e) {
      if (statusOf(e) !== 409)
        throw new RankStartError(`netns: cannot create the network sandbox: ${messageOf(e)}`, 'netns');
      // Left by an earlier run of this edge: replace it, its namespace has no overlay any more.
      await this.docker.getContainer(create.name!).remove({ force: true });
      container = await this.docker.createContainer(create);
    }
    try {
      await container.start();
      const info = await container.inspect();
      if (!info.State.Running || info.State.Pid <= 0) throw new Error(`not running (${info.State.Status})`);
      this.log('info', 'job network sandbox started', {
        jobId,
        container: container.id,
        pid: info.State.Pid,
      });
      return { id: container.id, pid: info.State.Pid };
    } catch (e) {
      await container.remove({ force: true }).catch(() => undefined);
      throw new RankStartError(`netns: cannot start the network sandbox: ${messageOf(e)}`, 'netns');
    }
  }

  /** Removes the job's network sandbox (after its ranks); idempotent. */
  async removeJobSandbox(jobId: string): Promise<void> {
    this.sandboxes.delete(jobId);
    const containers = await this.docker.listContainers({
      all: true,
      filters: {
        label: [
          `${LABEL.managed}=true`,
          `${LABEL.edgeId}=${this.options.edgeId}`,
          `${LABEL.role}=sandbox`,
          `${LABEL.jobId}=${jobId}`,
        ],
      },
    });
    await Promise.all(
      containers.map((c) =>
        this.docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch((e: unknown) => {
            if (statusOf(e) !== 404) throw e;
          }),
      ),
    );
  }

  async reapOrphans(edgeId: string): Promise<number> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL.managed}=true`, `${LABEL.edgeId}=${edgeId}`] },
    });
    let reaped = 0;
    for (const c of containers) {
      try {
        await this.docker.getContainer(c.Id).remove({ force: true });
        reaped += 1;
        this.log('warn', 'removed a container left by an earlier run of the edge', {
          container: c.Id,
          role: c.Labels[LABEL.role],
          jobId: c.Labels[LABEL.jobId],
          rank: c.Labels[LABEL.rank],
        });
      } catch (e) {
        if (statusOf(e) !== 404) throw e;
      }
    }
    if (edgeId === this.options.edgeId) this.sandboxes.clear();
    return reaped;
  }
}

class ContainerRank implements DockerRunningRank {
  readonly id: string;
  readonly exited: Promise<RankExit>;
  private readonly listeners: ((stream: 'stdout' | 'stderr', line: string) => void)[] = [];
  private buffered: ['stdout' | 'stderr', string][] = [];
  private stopRequested = false;
  private stopping: Promise<RankExit> | undefined;
  private pidsFile: string | null = null;
  private pidsHits = 0;
  private poller: NodeJS.Timeout | undefined;
  private readonly output: Promise<void>;
  private resolveExited!: (exit: RankExit) => void;

  constructor(
    private readonly container: Docker.Container,
    readonly image: ResolvedImage,
    stream: NodeJS.ReadWriteStream,
    private readonly docker: Docker,
    private readonly options: DockerRuntimeOptions,
    private readonly log: DockerRuntimeLog,
  ) {
    this.id = container.id;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    docker.modem.demuxStream(stream, stdout, stderr);
    stream.on('end', () => {
      stdout.end();
      stderr.end();
    });
    stream.on('error', () => {
      stdout.end();
      stderr.end();
    });
    this.output = Promise.all([
      lines(stdout, (l) => this.emit('stdout', l)),
      lines(stderr, (l) => this.emit('stderr', l)),
    ]).then(() => undefined);
    this.exited = new Promise<RankExit>((resolve) => (this.resolveExited = resolve));
  }

  /**
   * Called once the engine started the container: finds its pids cgroup and starts waiting for
   * its exit. (A wait begun before the start would return at once: "not running" is true of a
   * created container.)
   */
  async started(): Promise<void> {
    try {
      const info = await this.container.inspect();
      if (info.State.Pid > 0) this.pidsFile = await pidsEventsFile(info.State.Pid, this.options.cgroupRoot);
    } catch {
      this.pidsFile = null;
    }
    if (this.pidsFile !== null) {
      this.poller = setInterval(() => void this.pidsLimitHits(), this.options.pidsPollMs ?? 1_000);
      this.poller.unref();
    }
    void this.watch().then(this.resolveExited);
  }

  onOutput(listener: (stream: 'stdout' | 'stderr', line: string) => void): void {
    this.listeners.push(listener);
    const early = this.buffered;
    this.buffered = [];
    for (const [s, l] of early) listener(s, l);
  }

  private emit(stream: 'stdout' | 'stderr', line: string): void {
    if (this.listeners.length === 0) {
      // Lines that came before anyone listened (between start and onOutput) are kept, up to a bound.
      if (this.buffered.length < MAX_BUFFERED_LINES) this.buffered.push([stream, line]);
      return;
    }
    for (const l of this.listeners) {
      try {
        l(stream, line);
      } catch {
        // A listener's fault must not stop the output of the rank.
      }
    }
  }

  async pidsLimitHits(): Promise<number> {
    if (this.pidsFile === null) return this.pidsHits;
    try {
      const text = await readFile(this.pidsFile, 'utf8');
      const m = /^max\s+([0-9]+)/m.exec(text);
      // The cgroup goes with the container: keep the highest count seen.
      if (m) this.pidsHits = Math.max(this.pidsHits, Number(m[1]));
    } catch {
      // Gone with the container.
    }
    return this.pidsHits;
  }

  /**
   * The container's exit status. A wait that breaks without an answer (the engine restarting) is
   * retried: giving up would remove a rank that still runs. Null when the container is gone, or
   * the engine stayed away longer than `engineLossMs`.
   */
  private async waitForExit(): Promise<{ code: number | null; engineLost: boolean }> {
    const deadline = Date.now() + (this.options.engineLossMs ?? 5 * 60_000);
    let delay = 250;
    for (;;) {
      try {
        const result = (await this.container.wait()) as { StatusCode?: number };
        return { code: typeof result.StatusCode === 'number' ? result.StatusCode : null, engineLost: false };
      } catch (e) {
        const status = statusOf(e);
        if (status === 404) return { code: null, engineLost: false };
        if (Date.now() >= deadline) {
          this.log('error', 'lost the Docker engine while a rank ran', {
            container: this.id,
            error: messageOf(e),
          });
          return { code: null, engineLost: true };
        }
        this.log('warn', 'waiting on a rank container failed; retrying', {
          container: this.id,
          error: messageOf(e),
        });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }

  private async watch(): Promise<RankExit> {
    const waited = await this.waitForExit();
    let statusCode = waited.code;
    if (this.poller !== undefined) clearInterval(this.poller);
    let oomKilled = false;
    try {
      const info = await this.container.inspect();
      oomKilled = info.State.OOMKilled;
      if (statusCode === null) statusCode = info.State.ExitCode;
    } catch {
      // Removed by someone else; the wait result stands.
    }
    // The attach stream ends with the container; do not hang on a stream the engine never closes.
    await Promise.race([this.output, new Promise((r) => setTimeout(r, 5_000).unref())]);
    await this.container.remove({ force: true }).catch((e: unknown) => {
      if (statusOf(e) !== 404)
        this.log('warn', 'could not remove a rank container', { container: this.id, error: messageOf(e) });
    });
    // tini (PID 1) exits 128+n when the rank died of signal n.
    const signal =
      statusCode !== null && statusCode > 128 && statusCode < 128 + 65
        ? (SIGNAL_NAMES.get(statusCode - 128) ?? null)
        : null;
    const reason = waited.engineLost
      ? 'engine-lost'
      : oomKilled
        ? 'oom'
        : this.stopRequested
          ? 'stopped'
          : statusCode !== 0 && this.pidsHits > 0
            ? 'pids-limit'
            : null;
    return { exitCode: statusCode, signal, reason };
  }

  stop(graceMs: number): Promise<RankExit> {
    this.stopping ??= (async () => {
      this.stopRequested = true;
      await this.signal('SIGTERM');
      const timer = setTimeout(() => void this.signal('SIGKILL'), Math.max(0, graceMs));
      try {
        return await this.exited;
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.stopping;
  }

  private async signal(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    try {
      await this.container.kill({ signal });
    } catch (e) {
      // 404/409: already exited or removed — stopping is idempotent.
      const status = statusOf(e);
      if (status !== 404 && status !== 409)
        this.log('warn', `could not send ${signal} to a rank container`, {
          container: this.id,
          error: messageOf(e),
        });
    }
  }
}

/**
 * The `pids.events` file of the cgroup `pid` lives in (cgroup v1: the `pids` hierarchy; v2: the
 * unified one); null when it cannot be found (another cgroup layout, no permission).
 */
const pidsEventsFile = async (pid: number, root = '/sys/fs/cgroup'): Promise<string | null> => {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/cgroup`, 'utf8');
  } catch {
    return null; // The process is gone already.
  }
  for (const file of pidsEventsCandidates(text, root)) {
    try {
      await readFile(file, 'utf8');
      return file;
    } catch {
      // Try the next one (a v1 host may list a unified 0:: entry too).
    }
  }
  return null;
};

/**
 * Where a process's `pids.events` may be, from its `/proc/<pid>/cgroup`: the v1 `pids` hierarchy
 * first, then the v2 unified one. Paths climbing out of `root` are ignored.
 */
export const pidsEventsCandidates = (procCgroup: string, root = '/sys/fs/cgroup'): string[] => {
  const v1: string[] = [];
  const v2: string[] = [];
  for (const line of procCgroup.split('\n')) {
    const m = /^[0-9]+:([^:]*):(\/[^\n]*)$/.exec(line.trim());
    if (!m || m[2]!.split('/').includes('..')) continue;
    const path = m[2] === '/' ? '' : m[2]!;
    if (m[1]!.split(',').includes('pids')) v1.push(`${root}/pids${path}/pids.events`);
    else if (m[1] === '' && line.startsWith('0::')) v2.push(`${root}${path}/pids.events`);
  }
  return [...v1, ...v2];
};
