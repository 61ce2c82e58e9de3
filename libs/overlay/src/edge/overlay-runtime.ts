import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import type { EdgePathReport, OverlayEndpoint, OverlayPeer } from '@gpunet/contracts';
import { runCommand } from '../run-command';
import { kernelWireGuardAvailable } from '../wireguard/device';
import { type AttachOverlayOptions, type ConnectPeersOptions, JobOverlay } from './job-overlay';

/** One job's overlay on this host, as `EdgeOverlayAgent` uses it (`JobOverlay` in production). */
export interface AttachedOverlay {
  readonly endpoint: OverlayEndpoint;
  connectPeers(peers: readonly OverlayPeer[], options: ConnectPeersOptions): Promise<EdgePathReport>;
  pathReport(): Promise<EdgePathReport>;
  detach(): Promise<void>;
}

/**
 * What `EdgeOverlayAgent` needs from the host: the privileged work, behind a port so that the
 * command handling (validation, ordering, idempotency) is tested without root.
 */
export interface EdgeOverlayRuntime {
  /** Why this host cannot run job overlays (no privileges, no WireGuard), or null when it can. */
  unavailable(): Promise<string | null>;
  /** Creates the named network namespace (with `lo` up), replacing a stale one of that name. */
  createNetns(name: string): Promise<void>;
  /** Deletes the named namespace; nothing happens when it does not exist. */
  deleteNetns(name: string): Promise<void>;
  attach(options: AttachOverlayOptions): Promise<AttachedOverlay>;
}

export interface HostOverlayRuntimeOptions {
  /** Path of wireguard-go; default: found on `PATH`. */
  readonly wireguardGo?: string;
  /** `auto` (default): the kernel module when present, else wireguard-go. */
  readonly backend?: 'auto' | 'userspace' | 'kernel';
}

// Capability numbers (linux/capability.h): moving links and addressing them, and mounting the
// namespace files `ip netns add` creates under /run/netns.
const CAP_NET_ADMIN = 12n;
const CAP_SYS_ADMIN = 21n;

/** The effective capabilities of this process (`CapEff` of /proc/self/status), or null off Linux. */
const effectiveCapabilities = async (): Promise<bigint | null> => {
  try {
    const status = await readFile('/proc/self/status', 'utf8');
    const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    return hex === undefined ? null : BigInt(`0x${hex}`);
  } catch {
    return null;
  }
};

const executable = async (path: string): Promise<boolean> =>
  access(path, constants.X_OK).then(
    () => true,
    () => false,
  );

/** The binary's path: as given when absolute, else the first match on `PATH`; null when absent. */
export const findExecutable = async (
  name: string,
  path = process.env['PATH'] ?? '',
): Promise<string | null> => {
  if (isAbsolute(name)) return (await executable(name)) ? name : null;
  for (const dir of path.split(delimiter).filter((d) => d !== ''))
    if (await executable(join(dir, name))) return join(dir, name);
  return null;
};

const netnsExists = async (name: string): Promise<boolean> =>
  (await runCommand(['ip', 'netns', 'list'])).split('\n').some((line) => line.split(' ')[0] === name);

/** The host's real runtime: `ip netns`, `JobOverlay` (wireguard-go or the kernel module). */
export const hostOverlayRuntime = (options: HostOverlayRuntimeOptions = {}): EdgeOverlayRuntime => {
  let ready = false;
  return {
    async unavailable() {
      if (ready) return null;
      const caps = await effectiveCapabilities();
      if (caps === null) return 'job overlays need Linux (network namespaces and /proc)';
      const missing = [
        ...((caps >> CAP_NET_ADMIN) & 1n ? [] : ['CAP_NET_ADMIN']),
        ...((caps >> CAP_SYS_ADMIN) & 1n ? [] : ['CAP_SYS_ADMIN']),
      ];
      if (missing.length > 0)
        return `job overlays need ${missing.join(' and ')} (run the edge as root); this process (uid ${String(process.getuid?.())}) lacks them`;
      if ((await findExecutable('ip')) === null)
        return 'job overlays need the `ip` command (iproute2) on PATH';
      const backend = options.backend ?? 'auto';
      const userspace = await findExecutable(options.wireguardGo ?? 'wireguard-go');
      if (backend === 'userspace' && userspace === null)
        return `job overlays need wireguard-go: ${options.wireguardGo ?? 'wireguard-go'} is not an executable on PATH`;
      if (backend !== 'userspace' && userspace === null && !(await kernelWireGuardAvailable()))
        return 'job overlays need WireGuard: wireguard-go is not on PATH and the kernel has no wireguard module';
      ready = true;
      return null;
    },
    async createNetns(name) {
      await this.deleteNetns(name);
      await runCommand(['ip', 'netns', 'add', name]);
      await runCommand(['ip', '-n', name, 'link', 'set', 'dev', 'lo', 'up']);
    },
    async deleteNetns(name) {
      if (!(await netnsExists(name))) return;
      try {
        await runCommand(['ip', 'netns', 'del', name]);
      } catch (error) {
        // Gone meanwhile (a concurrent delete) is the outcome wanted.
        if (await netnsExists(name)) throw error;
      }
    },
    attach: (attachOptions) =>
      JobOverlay.attach({
        ...(options.wireguardGo ? { wireguardGo: options.wireguardGo } : {}),
        ...(options.backend ? { backend: options.backend } : {}),
        ...attachOptions,
      }),
  };
};
