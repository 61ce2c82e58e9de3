/*
 * The isolation an edge runs ranks with (ADR 0072), as the edge itself finds it: the process
 * runtime is host processes; the docker runtime is what the engine's own `docker info` says it runs
 * containers with — user namespaces (`userns-remap`, rootless Docker) and the OCI runtime of the
 * rank containers (`runsc` is gVisor). It goes into the signed inventory report as `host.isolation`.
 */
import type { EdgeIsolation } from '@gpunet/contracts';
import Docker from 'dockerode';

/** The part of the Engine API's `GET /info` (dockerode's `docker.info()`) the level rests on. */
export interface DockerInfo {
  readonly ServerVersion?: string;
  /** `name=seccomp,profile=default`, `name=userns`, `name=rootless`, `name=apparmor`, … */
  readonly SecurityOptions?: readonly string[] | null;
  /** The OCI runtimes registered with the engine, by name (`runc`, `runsc`, …), with their `path`. */
  readonly Runtimes?: Readonly<Record<string, { readonly path?: string } | undefined>> | null;
  /** The runtime of containers that name none. */
  readonly DefaultRuntime?: string;
}

/** `--runtime process`: ranks are plain processes of the provider's host. */
export const processIsolation = (): EdgeIsolation => ({
  level: 'host-process',
  runtime: 'process',
  ociRuntime: null,
  userNamespaces: false,
  detail:
    'ranks run as plain processes of this host with the edge user’s rights (--runtime process --unsafe-allow-host-processes): no sandbox',
});

/**
 * `--runtime none`: the edge starts no ranks. Reported as the weakest level, so that no job that
 * needs a sandbox is placed on an edge that would refuse to run it anyway.
 */
export const noRanksIsolation = (): EdgeIsolation => ({
  level: 'host-process',
  runtime: 'none',
  ociRuntime: null,
  userNamespaces: false,
  detail: 'the edge starts no ranks (--runtime none); reported as the weakest level',
});

/** The names in `SecurityOptions` (`name=seccomp,profile=default` → `seccomp`). */
const securityOptionNames = (info: DockerInfo): Set<string> =>
  new Set(
    (info.SecurityOptions ?? []).flatMap((option) =>
      option
        .split(',')
        .filter((part) => part.startsWith('name='))
        .map((part) => part.slice('name='.length)),
    ),
  );

const basename = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/**
 * The isolation of rank containers on an engine that answered `info`. `ociRuntime` is the runtime
 * the docker runtime creates rank containers with (`HostConfig.Runtime`); null: the engine's
 * default. A runtime registered under another name whose binary is `runsc` is gVisor too. A runtime
 * the engine does not know is reported as plain `container`, with why: such ranks fail to start.
 */
export const dockerIsolation = (info: DockerInfo, ociRuntime: string | null): EdgeIsolation => {
  const names = securityOptionNames(info);
  const rootless = names.has('rootless');
  const userNamespaces = rootless || names.has('userns');
  const runtime = ociRuntime ?? info.DefaultRuntime ?? 'runc';
  const runtimes = info.Runtimes ?? {};
  const registered = Object.hasOwn(runtimes, runtime);
  const path = runtimes[runtime]?.path;
  const gvisor = registered && (runtime === 'runsc' || (path !== undefined && basename(path) === 'runsc'));
  const engine = `Docker ${info.ServerVersion ?? '(version unknown)'}`;
  const users = userNamespaces
    ? `container root is an unprivileged host uid (${rootless ? 'rootless Docker' : 'userns-remap'})`
    : 'container root is host root (userns-remap or rootless Docker would map it to an unprivileged uid)';
  const level = gvisor ? 'gvisor' : userNamespaces ? 'container-userns' : 'container';
  const detail = !registered
    ? `${engine} has no OCI runtime ${runtime} (it has ${Object.keys(runtimes).join(', ') || 'none'}): rank containers fail to start; ${users}`
    : gvisor
      ? `${engine} with ${runtime} (gVisor): a user-space kernel answers the job’s system calls; ${users}`
      : `${engine} with ${runtime}: ${users}`;
  return { level, runtime: 'docker', ociRuntime: runtime, userNamespaces, detail: detail.slice(0, 512) };
};

/**
 * Asks the engine (`docker info`) and derives the isolation. An engine that does not answer is
 * reported as plain `container` (every rank container gets the sandbox; what the engine adds is
 * unknown) and asked again at the next rescan.
 */
export const probeDockerIsolation = async (
  docker: Pick<Docker, 'info'>,
  ociRuntime: string | null,
): Promise<EdgeIsolation> => {
  let info: DockerInfo;
  try {
    info = (await docker.info()) as DockerInfo;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      level: 'container',
      runtime: 'docker',
      ociRuntime,
      userNamespaces: false,
      detail: `the Docker engine did not answer (${reason.slice(0, 200)}): user namespaces and the OCI runtime are not checked`,
    };
  }
  return dockerIsolation(info, ociRuntime);
};

/**
 * What an edge that was told nothing about its isolation runs with, from its runtimes' kinds: the
 * weakest of them decides (host processes when the process runtime is among them), the engine's
 * `docker info` for the docker runtime with the engine's default OCI runtime, the weakest level
 * when there are none (ranks off).
 */
export const isolationOfRuntimes = (
  kinds: readonly ('process' | 'docker')[],
  docker: () => Pick<Docker, 'info'> = () => new Docker(),
): Promise<EdgeIsolation> => {
  if (kinds.length === 0) return Promise.resolve(noRanksIsolation());
  if (kinds.includes('process')) return Promise.resolve(processIsolation());
  return probeDockerIsolation(docker(), null);
};
