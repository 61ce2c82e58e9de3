/*
 * The sandbox of a docker rank, as data: from a validated `RankLaunch` and the provider's limits to
 * the exact Docker Engine `ContainerCreateOptions` (and the per-job network sandbox's). Pure — no
 * Docker, no file system — so every setting docs/security.md promises is asserted by unit tests on
 * recorded multi-GPU inventories, and once more on a real engine by the contract tests.
 */
import type { ContainerCreateOptions, DeviceRequest, HostConfig } from 'dockerode';
import { RANK_LABELS, RankStartError, type RankLaunch } from '../../app/rank-runtime.port';
import type { SandboxRuntime } from '../../domain/policy/policy';

/** Where the rank's workspace (the only writable host path) appears inside its container. */
export const CONTAINER_SCRATCH = '/scratch';
/** The unprivileged user every gpunet container runs as (distroless' `nonroot`; gpunet/job-base's `gpunet`). */
export const SANDBOX_USER = '65532:65532';
export const SANDBOX_UID = 65532;
/** The image that runs a job's network sandbox (pause) container, and the default for ranks. */
export const JOB_BASE_IMAGE = 'gpunet/job-base:torch-cpu';

/**
 * Labels on everything the docker runtime creates: they identify gpunet's containers for cleanup.
 * The edge, job, attempt and rank keys are the rank agent's (`RANK_LABELS`), so one filter
 * (`gpunet.edge=<id>`) finds ranks and job sandboxes alike.
 */
export const LABEL = {
  managed: 'org.gpunet.managed',
  edgeId: RANK_LABELS.edge,
  role: 'org.gpunet.role',
  jobId: RANK_LABELS.job,
  attempt: RANK_LABELS.attempt,
  rank: RANK_LABELS.rank,
  imageRef: 'org.gpunet.image.ref',
  imageId: 'org.gpunet.image.id',
  imageDigest: 'org.gpunet.image.digest',
  /** `simulated` on a rank whose reserved GPUs are simulated (no device was given). */
  gpus: 'org.gpunet.gpus',
} as const;

/** What the provider allows a rank container, whatever its spec asks for. */
export interface SandboxLimits {
  /** Largest memory limit a rank may have (the host's memory less the provider's reserve). */
  readonly maxMemoryBytes: number;
  /** Largest CPU limit a rank may have (the host's cores less the reserve), millicores. */
  readonly maxCpuMillicores: number;
  /** Process limit when the spec gives none. Default 1024. */
  readonly defaultPids?: number;
  /** Largest process limit a spec may ask for. Default 4096. */
  readonly maxPids?: number;
  /** Size of the `/tmp` tmpfs (counted in the memory limit). Default 256 MiB. */
  readonly tmpfsBytes?: number;
  /** Size of `/dev/shm` (PyTorch data loaders need more than Docker's 64 MiB). Default 256 MiB. */
  readonly shmBytes?: number;
}

export const DEFAULT_PIDS = 1024;
export const MAX_PIDS = 4096;
/**
 * Added to a rank's pids limit on runsc: gVisor's own sandbox and gofer processes live in the
 * container's pids cgroup, and their threads count against its limit. Measured on a 2-core host
 * with runsc 20221219 (ptrace platform): 55 tasks for an idle `sleep`, 67 while PyTorch runs on
 * two threads; a pids limit of 64 makes the sandbox itself crash. The Go runtime's threads grow
 * with the host's cores, hence the margin. The rank's own processes are still bounded by it.
 */
export const RUNSC_PIDS_HEADROOM = 256;
const MIB = 1024 * 1024;
/** Docker refuses memory limits under 6 MiB. */
export const MIN_MEMORY_BYTES = 6 * MIB;

/** An AMD GPU's device files on this host, from the inventory (PCI address → DRM render node). */
export interface AmdDevice {
  /** `/dev/dri/renderD128`. */
  readonly renderNode: string;
  /** Group owning the render node (`render`), so that the non-root rank may open it; null: world-accessible. */
  readonly gid: number | null;
}

/** What the host has for AMD GPUs: `/dev/kfd` (ROCm's compute interface) and one render node per GPU. */
export interface AmdDevices {
  readonly kfd: { readonly path: string; readonly gid: number | null } | null;
  /** GPU UUID (as detected: `AMD-0x…`) → its render node. */
  readonly byUuid: ReadonlyMap<string, AmdDevice>;
}

export const NO_AMD_DEVICES: AmdDevices = { kfd: null, byUuid: new Map() };

/** The GPU part of a container: NVIDIA by device request, AMD by device files. */
export interface GpuAccess {
  readonly deviceRequests: DeviceRequest[];
  readonly devices: { PathOnHost: string; PathInContainer: string; CgroupPermissions: string }[];
  readonly groupAdd: string[];
  /** Set in the container's environment whatever the image or spec says (see `gpuAccess`). */
  readonly env: Record<string, string>;
}

/** `GPU-<uuid>` or a MIG instance `MIG-<uuid>` (older drivers: `MIG-GPU-<uuid>/<gi>/<ci>`). */
const NVIDIA_UUID = /^(GPU|MIG)-[A-Za-z0-9][A-Za-z0-9/-]{0,126}$/;

/**
 * Device access for exactly the reserved GPUs, never more.
 *
 * NVIDIA: one device request for the `nvidia` driver naming each UUID — never `Count: -1` (`all`).
 * `NVIDIA_VISIBLE_DEVICES` is pinned to the same UUIDs (or `void` without GPUs) because images such
 * as `nvcr.io/nvidia/*` set it to `all`, and a host whose default runtime is `nvidia` would honour
 * the image's value. AMD: `/dev/kfd` plus the reserved GPUs' render nodes, mapped from the inventory;
 * a GPU whose render node is unknown is refused, never guessed. `ROCR_VISIBLE_DEVICES` /
 * `HIP_VISIBLE_DEVICES` need no pinning: a container sees only the render nodes it was given.
 */
export const gpuAccess = (launch: Pick<RankLaunch, 'gpuUuids' | 'gpuVendor'>, amd: AmdDevices): GpuAccess => {
  const uuids = launch.gpuUuids;
  if (new Set(uuids).size !== uuids.length)
    throw new RankStartError('gpuUuids: a GPU is listed twice', 'gpuUuids');
  if (uuids.length === 0)
    return { deviceRequests: [], devices: [], groupAdd: [], env: { NVIDIA_VISIBLE_DEVICES: 'void' } };
  if (launch.gpuVendor === null)
    throw new RankStartError('gpuVendor: GPUs are reserved but no vendor is given', 'gpuVendor');
  if (launch.gpuVendor === 'nvidia') {
    uuids.forEach((uuid, i) => {
      if (!NVIDIA_UUID.test(uuid))
        throw new RankStartError(
          `gpuUuids[${i}]: ${JSON.stringify(uuid.slice(0, 64))} is not an NVIDIA GPU or MIG UUID (GPU-…/MIG-…); ` +
            'devices are requested by exact UUID, never by index or "all"',
          `gpuUuids[${i}]`,
        );
    });
    return {
      deviceRequests: [{ Driver: 'nvidia', Count: 0, DeviceIDs: [...uuids], Capabilities: [['gpu']] }],
      devices: [],
      groupAdd: [],
      env: { NVIDIA_VISIBLE_DEVICES: uuids.join(','), NVIDIA_DRIVER_CAPABILITIES: 'compute,utility' },
    };
  }
  if (amd.kfd === null)
    throw new RankStartError(
      'gpuVendor: AMD GPUs are reserved but this host has no /dev/kfd (amdgpu/ROCm kernel driver not loaded)',
      'gpuVendor',
    );
  const devices = [{ PathOnHost: amd.kfd.path, PathInContainer: amd.kfd.path, CgroupPermissions: 'rw' }];
  const gids = new Set<number>();
  if (amd.kfd.gid !== null) gids.add(amd.kfd.gid);
  uuids.forEach((uuid, i) => {
    const device = amd.byUuid.get(uuid);
    if (device === undefined)
      throw new RankStartError(
        `gpuUuids[${i}]: no DRM render node is known for AMD GPU ${uuid.slice(0, 64)} ` +
          '(the inventory maps GPUs to /dev/dri/renderD* by PCI address; it is refused rather than guessed)',
        `gpuUuids[${i}]`,
      );
    devices.push({
      PathOnHost: device.renderNode,
      PathInContainer: device.renderNode,
      CgroupPermissions: 'rw',
    });
    if (device.gid !== null) gids.add(device.gid);
  });
  return {
    deviceRequests: [],
    devices,
    groupAdd: [...gids].sort((a, b) => a - b).map(String),
    env: { NVIDIA_VISIBLE_DEVICES: 'void' },
  };
};

/** The host path `path` as the container sees it: `<workspace>/x` → `/scratch/x`; null when outside. */
export const toContainerPath = (workspace: string, path: string): string | null => {
  const root = workspace.replace(/\/+$/, '');
  if (path === root) return CONTAINER_SCRATCH;
  if (path.startsWith(`${root}/`)) return `${CONTAINER_SCRATCH}${path.slice(root.length)}`;
  return null;
};

/** Container names allow `[a-zA-Z0-9][a-zA-Z0-9_.-]`; job ids are UUIDs, but never trust that. */
const nameToken = (value: string): string => value.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 80);

export const rankContainerName = (edgeId: string, launch: Pick<RankLaunch, 'jobId' | 'attempt' | 'rank'>) =>
  `gpunet-${nameToken(edgeId).slice(0, 24)}-${nameToken(launch.jobId)}-a${launch.attempt}-r${launch.rank}`;
export const sandboxContainerName = (edgeId: string, jobId: string) =>
  `gpunet-${nameToken(edgeId).slice(0, 24)}-${nameToken(jobId)}-net`;

/** API 1.41 fields dockerode's types lack. */
type SandboxHostConfig = HostConfig & { CgroupnsMode?: 'private' | 'host' };

/** The settings every gpunet container shares (ranks and network sandboxes). */
const hardened = (): SandboxHostConfig => ({
  Privileged: false,
  CapDrop: ['ALL'],
  CapAdd: [],
  // Docker applies its default seccomp profile unless told `seccomp=unconfined`; nothing here says so.
  SecurityOpt: ['no-new-privileges:true'],
  ReadonlyRootfs: true,
  IpcMode: 'private',
  PidMode: '',
  UTSMode: '',
  UsernsMode: '',
  CgroupnsMode: 'private',
  PublishAllPorts: false,
  PortBindings: {},
  Binds: [],
  ExtraHosts: [],
  OomKillDisable: false,
  // The kernel kills a job's process before the edge's or the provider's own under memory pressure.
  OomScoreAdj: 500,
  RestartPolicy: { Name: '', MaximumRetryCount: 0 },
  AutoRemove: false,
  // tini as PID 1: forwards SIGTERM to the rank (a bare PID 1 ignores it) and reaps zombies.
  Init: true,
  LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '2' } },
  Ulimits: [{ Name: 'core', Soft: 0, Hard: 0 }],
});

export interface RankContainerInput {
  readonly edgeId: string;
  readonly launch: RankLaunch;
  /** The image as resolved on this host: its content id, which the container is created from. */
  readonly image: { readonly ref: string; readonly id: string; readonly digest: string | null };
  /** `none`: no network at all; `container`: the job's network sandbox (its overlay interface). */
  readonly network: { readonly mode: 'none' } | { readonly mode: 'container'; readonly id: string };
  readonly limits: SandboxLimits;
  readonly amd: AmdDevices;
  /** The host's GPUs are simulated (a declared inventory): see `simulatedGpuAccess`. Default false. */
  readonly simulatedGpus?: boolean;
  /**
   * Policy `sandbox.runtime`. `runc`: the daemon's default runtime (no `Runtime` is set, so a host
   * whose default is `nvidia` keeps it); `runsc`: gVisor, for ranks without GPUs. Default `runc`.
   */
  readonly ociRuntime?: SandboxRuntime;
}

/**
 * GPU access on a host whose GPUs are simulated (`provider-edge start --simulate`, development and
 * CI): there is no device to give, so the container gets none, sees no CUDA device, and finds the
 * reserved (simulated) ids in `GPUNET_SIMULATED_GPUS` — simulated, and saying so, like the inventory
 * it came from. The container is labelled `org.gpunet.gpus=simulated`.
 */
export const simulatedGpuAccess = (launch: Pick<RankLaunch, 'gpuUuids'>): GpuAccess => {
  if (new Set(launch.gpuUuids).size !== launch.gpuUuids.length)
    throw new RankStartError('gpuUuids: a GPU is listed twice', 'gpuUuids');
  return {
    deviceRequests: [],
    devices: [],
    groupAdd: [],
    env: {
      NVIDIA_VISIBLE_DEVICES: 'void',
      CUDA_VISIBLE_DEVICES: '',
      GPUNET_SIMULATED_GPUS: launch.gpuUuids.join(','),
    },
  };
};

/** Env names a spec may not set: the sandbox decides them. */
const RESERVED_ENV = new Set([
  'NVIDIA_VISIBLE_DEVICES',
  'NVIDIA_DRIVER_CAPABILITIES',
  'LD_PRELOAD',
  'GPUNET_SIMULATED_GPUS',
]);

/**
 * A rank with real GPUs cannot run on runsc: gVisor reaches a GPU only through its nvproxy, which
 * the packaged runsc lacks. Simulated GPUs have no device to give, so they run.
 */
export const refuseGpusOnRunsc = (
  ociRuntime: SandboxRuntime,
  simulatedGpus: boolean,
  launch: Pick<RankLaunch, 'gpuUuids'>,
): void => {
  if (ociRuntime === 'runsc' && !simulatedGpus && launch.gpuUuids.length > 0)
    throw new RankStartError(
      'gpuUuids: this provider runs ranks on gVisor (policy sandbox.runtime: runsc), and the packaged runsc ' +
        'has no nvproxy: it cannot give a container a GPU. GPU jobs need sandbox.runtime: runc',
      'gpuUuids',
      'RUNTIME_UNAVAILABLE',
    );
};

/**
 * The create options of one rank's container. Throws `RankStartError` (naming the field) for a
 * launch the sandbox cannot honour: limits beyond the provider's, unknown devices, paths outside
 * the workspace. Nothing here is the agent's validation repeated for its own sake: these are the
 * checks whose failure would weaken the sandbox.
 */
export const rankContainerOptions = (input: RankContainerInput): ContainerCreateOptions => {
  const { launch, limits } = input;
  const { memoryBytes, cpuMillicores, pids } = launch.limits;
  if (!Number.isSafeInteger(memoryBytes) || memoryBytes < MIN_MEMORY_BYTES)
    throw new RankStartError(
      `limits.memoryBytes: ${memoryBytes} is below Docker's minimum of 6 MiB`,
      'limits.memoryBytes',
    );
  if (memoryBytes > limits.maxMemoryBytes)
    throw new RankStartError(
      `limits.memoryBytes: ${memoryBytes} exceeds the provider's limit of ${limits.maxMemoryBytes}`,
      'limits.memoryBytes',
    );
  if (!Number.isSafeInteger(cpuMillicores) || cpuMillicores < 1)
    throw new RankStartError(
      `limits.cpuMillicores: ${cpuMillicores} is not a positive integer`,
      'limits.cpuMillicores',
    );
  if (cpuMillicores > limits.maxCpuMillicores)
    throw new RankStartError(
      `limits.cpuMillicores: ${cpuMillicores} exceeds the provider's limit of ${limits.maxCpuMillicores}`,
      'limits.cpuMillicores',
    );
  const maxPids = limits.maxPids ?? MAX_PIDS;
  const pidsLimit = pids ?? Math.min(limits.defaultPids ?? DEFAULT_PIDS, maxPids);
  if (!Number.isSafeInteger(pidsLimit) || pidsLimit < 1 || pidsLimit > maxPids)
    throw new RankStartError(`limits.pids: ${pidsLimit} is not within 1…${maxPids}`, 'limits.pids');
  if (!launch.workspace.startsWith('/') || launch.workspace.split('/').includes('..'))
    throw new RankStartError('workspace: must be an absolute path without ..', 'workspace');
  const workingDir = toContainerPath(launch.workspace, launch.workingDir);
  if (workingDir === null || launch.workingDir.split('/').includes('..'))
    throw new RankStartError('workingDir: must lie inside the workspace', 'workingDir');
  const runsc = input.ociRuntime === 'runsc';
  refuseGpusOnRunsc(input.ociRuntime ?? 'runc', input.simulatedGpus === true, launch);
  const gpu = input.simulatedGpus === true ? simulatedGpuAccess(launch) : gpuAccess(launch, input.amd);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(launch.env)) {
    if (RESERVED_ENV.has(name)) continue;
    // The agent writes host paths for the process runtime; the container knows its workspace as /scratch.
    env[name] = toContainerPath(launch.workspace, value) ?? value;
  }
  Object.assign(env, gpu.env);
  const tmpfsBytes = limits.tmpfsBytes ?? 256 * MIB;
  const network = input.network;
  const labels: Record<string, string> = {
    ...launch.labels,
    [LABEL.managed]: 'true',
    [LABEL.edgeId]: input.edgeId,
    [LABEL.role]: 'rank',
    [LABEL.jobId]: launch.jobId,
    [LABEL.attempt]: String(launch.attempt),
    [LABEL.rank]: String(launch.rank),
    [LABEL.imageRef]: input.image.ref,
    [LABEL.imageId]: input.image.id,
    ...(input.image.digest === null ? {} : { [LABEL.imageDigest]: input.image.digest }),
    ...(input.simulatedGpus === true && launch.gpuUuids.length > 0 ? { [LABEL.gpus]: 'simulated' } : {}),
  };
  return {
    name: rankContainerName(input.edgeId, launch),
    // The content id, not the tag: what was checked against the policy and recorded is what runs.
    Image: input.image.id,
    User: SANDBOX_USER,
    Cmd: [...launch.cmd],
    ...(launch.entrypoint === null ? {} : { Entrypoint: [...launch.entrypoint] }),
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    WorkingDir: workingDir,
    Labels: labels,
    ...(network.mode === 'none' ? { Hostname: `rank-${launch.rank}` } : {}),
    NetworkDisabled: false,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: false,
    Tty: false,
    StopSignal: 'SIGTERM',
    HostConfig: {
      ...hardened(),
      ...(runsc ? { Runtime: 'runsc' } : {}),
      NetworkMode: network.mode === 'none' ? 'none' : `container:${network.id}`,
      Mounts: [
        {
          Type: 'bind',
          Source: launch.workspace,
          Target: CONTAINER_SCRATCH,
          ReadOnly: false,
          BindOptions: { Propagation: 'rprivate' },
        },
      ],
      Tmpfs: { '/tmp': `rw,nosuid,nodev,noexec,size=${tmpfsBytes}` },
      ShmSize: limits.shmBytes ?? 256 * MIB,
      Memory: memoryBytes,
      // No swap: the memory limit is the limit.
      MemorySwap: memoryBytes,
      NanoCpus: cpuMillicores * 1_000_000,
      PidsLimit: runsc ? pidsLimit + RUNSC_PIDS_HEADROOM : pidsLimit,
      DeviceRequests: gpu.deviceRequests,
      Devices: gpu.devices,
      GroupAdd: gpu.groupAdd,
    },
  };
};

/**
 * The per-job network sandbox (the Kubernetes pod-sandbox pattern): a container that only holds a
 * network namespace. It starts with no network (`none`: loopback only); the overlay moves the job's
 * WireGuard interface into it (`JobOverlay.attach({ rankNetns: { pid } })`), and the job's ranks on
 * this host join it with `NetworkMode: container:<id>`. Its process sleeps, unprivileged, in the
 * smallest limits Docker allows.
 */
export const sandboxContainerOptions = (input: {
  readonly edgeId: string;
  readonly jobId: string;
  readonly image: string;
}): ContainerCreateOptions => ({
  name: sandboxContainerName(input.edgeId, input.jobId),
  Image: input.image,
  User: SANDBOX_USER,
  Entrypoint: ['sleep'],
  Cmd: ['infinity'],
  Env: ['NVIDIA_VISIBLE_DEVICES=void'],
  WorkingDir: '/',
  Hostname: 'job',
  Labels: {
    [LABEL.managed]: 'true',
    [LABEL.edgeId]: input.edgeId,
    [LABEL.role]: 'sandbox',
    [LABEL.jobId]: input.jobId,
  },
  AttachStdout: false,
  AttachStderr: false,
  Tty: false,
  HostConfig: {
    ...hardened(),
    NetworkMode: 'none',
    Mounts: [],
    Memory: 16 * MIB,
    MemorySwap: 16 * MIB,
    NanoCpus: 50_000_000,
    PidsLimit: 8,
    DeviceRequests: [],
    Devices: [],
  },
});
