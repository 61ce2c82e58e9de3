import { type Netns, REPO_ROOT } from '@gpunet/netns-testbed';
import { createUser, fromSeed } from '@nats-io/nkeys';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_PROBE_PORTS } from './measurements';
import { ServiceProcess } from './service-process';

export interface SimulatedEdgeOptions {
  /** The provider's name (policy `name`). */
  readonly name: string;
  /** A declared inventory (`provider-edge start --simulate`): simulated GPUs, labelled so everywhere. */
  readonly inventory: string;
  /** Subnets the provider joins. */
  readonly subnets: readonly string[];
  /** The asset it prices in. Default `NTX`. */
  readonly asset?: string;
  /** Its floor per GPU-hour for every model, in whole units of the asset (`"0.10"`). Default `0.10`. */
  readonly floorPerGpuHour?: string;
  readonly natsUrl: string;
  readonly prefix: string;
  /** Run the edge inside this namespace (its own address and network). */
  readonly netns?: Netns;
  /** How to enter `netns` (see `ServiceProcessOptions.enter`); an edge with job overlays needs `nsenter`. */
  readonly enter?: 'netns-exec' | 'nsenter';
  /**
   * Job overlays: `off`, or on with the start of its rank namespaces' names (edges sharing a
   * machine need distinct ones). Default: the edge's own default (`auto`).
   */
  readonly overlay?: 'off' | { readonly netnsPrefix: string };
  /** Heartbeat period. Default `1s`. */
  readonly heartbeat?: string;
  /** The edge's nkey seed (`SU…`); default a new one. */
  readonly seed?: string;
  /**
   * Ports the edge answers link probes on (`--probe-ports`), or `off`. Default: the cluster's
   * (`CLUSTER_PROBE_PORTS`, what its benchmarking probes) in a namespace; `off` on loopback, where
   * every edge has the machine's addresses and only one could hold the ports.
   */
  readonly probePorts?: { readonly udpPort: number; readonly tcpPort: number } | 'off';
  /**
   * How its ranks run: `process` (the default: host processes, `--runtime process
   * --unsafe-allow-host-processes`; the cluster's edges report isolation host-process), `docker`
   * (`--runtime docker`), or `edge-default` (no `--runtime`: what a provider gets who names none).
   */
  readonly runtime?: 'process' | 'docker' | 'edge-default';
  /** Extra arguments for `provider-edge start`. */
  readonly extraArgs?: readonly string[];
}

/** The `provider-edge start` arguments of `SimulatedEdgeOptions.runtime`. */
export const runtimeArgs = (runtime: SimulatedEdgeOptions['runtime'] = 'process'): readonly string[] =>
  runtime === 'process'
    ? ['--runtime', 'process', '--unsafe-allow-host-processes']
    : runtime === 'docker'
      ? ['--runtime', 'docker']
      : [];

const policy = (o: Omit<SimulatedEdgeOptions, 'inventory'>): string => `version: 1
name: ${o.name}
gpus: { share: all, max_per_job: 8 }
cpu: { reserve_cores: 0 }
memory: { reserve: 0GiB }
images: { allow: ["gpunet/", "docker.io/gpunet/"] }
pricing:
  asset: ${o.asset ?? 'NTX'}
  floors: []
  default_per_gpu_hour: "${o.floorPerGpuHour ?? '0.10'}"
subnets: [${o.subnets.join(', ')}]
jobs: { max_duration: 24h }
location: { continent: EU, country: DE }
`;

const umount = (args: readonly string[]): Promise<void> =>
  new Promise((resolve, reject) =>
    execFile('umount', [...args], { timeout: 60_000 }, (error: Error | null) =>
      error ? reject(error) : resolve(),
    ),
  );

/**
 * Removes an edge's directory, unmounting first what is mounted below it: a docker-runtime edge
 * mounts each rank's workspace file system under `workspaces/` (provider-edge's workspace-quota.ts),
 * and `rm -rf` on it would empty it, fail on the mount point and leave its loop device attached.
 * (provider-edge's own `removeWorkspaces` does the same for the edge; a tool cannot import it.)
 */
export const removeEdgeDir = async (dir: string): Promise<void> => {
  const root = await realpath(dir).catch(() => null);
  if (root === null) return;
  const points = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((p) => p.startsWith(`${root}/`))
    .sort((a, b) => b.split('/').length - a.split('/').length);
  // Busy (a container still holds it): detach lazily, so the removal never walks into it.
  for (const point of points) await umount([point]).catch(() => umount(['-l', point]));
  await rm(root, { recursive: true, force: true });
};

/** A provider edge of a development cluster: a real `provider-edge` process with simulated GPUs. */
export interface SimulatedEdge {
  readonly edgeId: string;
  readonly name: string;
  readonly dir: string;
  readonly process: ServiceProcess;
  /** Stops the edge and removes its directory. */
  remove(): Promise<void>;
}

/**
 * Writes the edge's directory (identity as `edge init` writes it, its policy, and `files`) and starts
 * `provider-edge start` there with the cluster's flags, `args` and `env` on top.
 */
const startEdgeProcess = async (
  options: Omit<SimulatedEdgeOptions, 'inventory'>,
  edge: {
    readonly files?: Readonly<Record<string, string>>;
    readonly args: (dir: string) => readonly string[];
    readonly env?: Readonly<Record<string, string>>;
  },
): Promise<SimulatedEdge> => {
  const probe = options.probePorts ?? (options.netns ? CLUSTER_PROBE_PORTS : 'off');
  const dir = await mkdtemp(join(tmpdir(), `gpunet-edge-${options.name}-`));
  const kp = options.seed ? fromSeed(new TextEncoder().encode(options.seed)) : createUser();
  await writeFile(join(dir, 'edge.nk'), `${new TextDecoder().decode(kp.getSeed())}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'policy.yaml'), policy(options));
  for (const [file, text] of Object.entries(edge.files ?? {})) await writeFile(join(dir, file), text);
  const process = new ServiceProcess({
    name: `edge-${options.name}`,
    main: 'services/provider-edge/src/main.ts',
    args: [
      'start',
      '--dir',
      dir,
      '--nats',
      options.natsUrl,
      '--prefix',
      options.prefix,
      ...edge.args(dir),
      ...runtimeArgs(options.runtime),
      '--heartbeat',
      options.heartbeat ?? '1s',
      '--rescan',
      '0s',
      '--probe-ports',
      probe === 'off' ? 'off' : `${probe.udpPort}/${probe.tcpPort}`,
      ...(options.overlay === undefined
        ? []
        : options.overlay === 'off'
          ? ['--overlay', 'off']
          : ['--overlay', 'on', '--overlay-netns-prefix', options.overlay.netnsPrefix]),
      ...(options.extraArgs ?? []),
    ],
    ...(edge.env ? { env: edge.env } : {}),
    ready: /"msg":"edge started"/,
    ...(options.netns ? { netns: options.netns } : {}),
    ...(options.enter ? { enter: options.enter } : {}),
  });
  try {
    await process.start();
  } catch (error) {
    await removeEdgeDir(dir);
    throw error;
  }
  return {
    edgeId: kp.getPublicKey(),
    name: options.name,
    dir,
    process,
    remove: async () => {
      await process.stop();
      await removeEdgeDir(dir);
    },
  };
};

/** Writes the edge's directory (identity as `edge init` writes it, policy, inventory) and starts it. */
export const startSimulatedEdge = (options: SimulatedEdgeOptions): Promise<SimulatedEdge> =>
  startEdgeProcess(options, {
    files: { 'inventory.yaml': options.inventory },
    args: (dir) => ['--simulate', join(dir, 'inventory.yaml')],
  });

/**
 * The reconstructed `nvidia-smi` of two H100 80GB HBM3 (not recorded from a real machine; its header
 * says so). First on an edge's PATH, it makes the real detection report two H100s.
 */
export const FAKE_H100_NVIDIA_SMI_DIR = join(
  REPO_ROOT,
  'services/provider-edge/test/fixtures/nvidia/fake-h100x2',
);

export interface LyingH100EdgeOptions extends Omit<SimulatedEdgeOptions, 'inventory'> {
  /**
   * CPU threads the edge's challenge worker may use (`--challenge-threads`): the throttle on its slow
   * path. Default 1.
   */
  readonly challengeThreads?: number;
}

/**
 * An edge that claims two H100s it does not have: a real `provider-edge` process without
 * `--simulate`, whose PATH starts with the fake nvidia-smi. It registers two NVIDIA H100 80GB HBM3
 * (not simulated) through the real detection path; torch on this host sees no GPU, so its
 * challenges are computed for real on the CPU (honest products, far slower than an H100) and its
 * benchmarks fail `DEVICE_ABSENT`. What `SimulatedEdge` returns, with the same `remove()`.
 */
export const startLyingH100Edge = (options: LyingH100EdgeOptions): Promise<SimulatedEdge> =>
  startEdgeProcess(options, {
    args: () => ['--challenge-threads', String(options.challengeThreads ?? 1)],
    env: { PATH: `${FAKE_H100_NVIDIA_SMI_DIR}:${globalThis.process.env['PATH'] ?? '/usr/bin:/bin'}` },
  });
