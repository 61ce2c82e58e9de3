import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { inNetns, moveLink, type NetnsRef } from '../netns/netns';
import { CommandError, runCommand } from '../run-command';
import { type DeviceConfig, type DeviceState, type PeerConfig, uapiGet, uapiSet } from './uapi';

/** A WireGuard interface of one (job, host), whichever implementation runs it. */
export interface WireGuardDevice {
  readonly backend: 'userspace' | 'kernel';
  /** The name it was created with (the UAPI socket keeps this name after a rename). */
  readonly ifname: string;
  configure(config: DeviceConfig): Promise<void>;
  state(): Promise<DeviceState>;
  /** Moves the interface into `ns`; it arrives down and still named `ifname`. */
  moveTo(ns: NetnsRef): Promise<void>;
  /** Tells the device its interface was renamed in its namespace (the kernel backend addresses it by name). */
  renamed(name: string): void;
  /** Removes the interface (and stops its process). Idempotent. */
  close(): Promise<void>;
}

export class WireGuardStartError extends Error {
  override readonly name = 'WireGuardStartError';
  readonly code = 'WIREGUARD_START_FAILED' as const;
}

export interface UserspaceOptions {
  /** Default `wireguard-go` (on PATH). */
  readonly binary?: string;
  /** Where wireguard-go puts its UAPI socket. Default `/var/run/wireguard`. */
  readonly runDir?: string;
  /** wireguard-go's `LOG_LEVEL`: `error` (default), `verbose`, `silent`. */
  readonly logLevel?: 'error' | 'verbose' | 'silent';
  /** How long to wait for the UAPI socket. Default 5 000 ms. */
  readonly startTimeoutMs?: number;
  /** Called with each line wireguard-go prints. */
  readonly onLog?: (line: string) => void;
}

/**
 * `wireguard-go -f <ifname>`: creates the TUN in the current network namespace (the UDP socket
 * stays there when the TUN is moved), configured over its UAPI socket. The process is ours: `close`
 * ends it, which removes the interface wherever it was moved.
 */
export const startUserspaceWireGuard = async (
  ifname: string,
  options: UserspaceOptions = {},
): Promise<WireGuardDevice> => {
  if (!/^[A-Za-z0-9_-]{1,15}$/.test(ifname))
    throw new WireGuardStartError(`bad interface name ${JSON.stringify(ifname)}`);
  const socketPath = join(options.runDir ?? '/var/run/wireguard', `${ifname}.sock`);
  const child: ChildProcess = spawn(options.binary ?? 'wireguard-go', ['-f', ifname], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: options.logLevel ?? 'error', WG_PROCESS_FOREGROUND: '1' },
  });
  let output = '';
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-8192);
    for (const line of text.split('\n')) if (line.trim()) options.onLog?.(line);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.on('error', (error) => {
      output += `\n${error.message}`;
      exited = true;
      resolve();
    });
    child.on('exit', () => {
      exited = true;
      resolve();
    });
  });

  const deadline = Date.now() + (options.startTimeoutMs ?? 5_000);
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    if (exited)
      throw new WireGuardStartError(`wireguard-go ${ifname} exited while starting: ${output.trim()}`);
    try {
      await uapiGet(socketPath);
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new WireGuardStartError(
          `wireguard-go ${ifname}: no UAPI socket at ${socketPath}: ${output.trim()}`,
          {
            cause: error,
          },
        );
      }
      await sleep(delay);
    }
  }

  let closing: Promise<void> | undefined;
  return {
    backend: 'userspace',
    ifname,
    configure: (config) => uapiSet(socketPath, config),
    state: () => uapiGet(socketPath),
    moveTo: (ns) => moveLink(ifname, ns),
    renamed: () => undefined,
    close: () =>
      (closing ??= (async () => {
        if (exited) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exit;
        clearTimeout(timer);
      })()),
  };
};

/** The INI configuration `wg setconf` takes (kernel backend). */
export const wgConfText = (privateKey: string, listenPort: number, peers: readonly PeerConfig[]): string =>
  [
    '[Interface]',
    `PrivateKey = ${privateKey}`,
    `ListenPort = ${listenPort}`,
    ...peers.flatMap((peer) => [
      '',
      '[Peer]',
      `PublicKey = ${peer.publicKey}`,
      ...(peer.endpoint ? [`Endpoint = ${peer.endpoint}`] : []),
      `AllowedIPs = ${peer.allowedIps.join(', ')}`,
      `PersistentKeepalive = ${peer.persistentKeepaliveSec}`,
    ]),
    '',
  ].join('\n');

/** Parses `wg show <if> dump` (kernel backend). */
export const parseWgDump = (dump: string): DeviceState => {
  const [head, ...rows] = dump.trim().split('\n');
  const [, publicKey, listenPort] = (head ?? '').split('\t');
  return {
    publicKey: publicKey && publicKey !== '(none)' ? publicKey : null,
    listenPort: Number(listenPort ?? 0),
    peers: rows
      .filter((row) => row.trim() !== '')
      .map((row) => {
        const [key, , endpoint, allowed, handshake, rx, tx, keepalive] = row.split('\t');
        return {
          publicKey: key ?? '',
          endpoint: endpoint && endpoint !== '(none)' ? endpoint : null,
          lastHandshakeAtMs: Number(handshake) > 0 ? Number(handshake) * 1000 : null,
          rxBytes: Number(rx ?? 0),
          txBytes: Number(tx ?? 0),
          allowedIps: allowed && allowed !== '(none)' ? allowed.split(',') : [],
          persistentKeepaliveSec: keepalive === 'off' ? 0 : Number(keepalive ?? 0),
        };
      }),
  };
};

/**
 * Kernel WireGuard (`ip link add … type wireguard`), configured with `wg`. Its socket stays in the
 * namespace that created it, like wireguard-go's; after a move, `wg` runs inside the rank namespace.
 * Not available on our development machines (no module): covered by unit tests of its text formats.
 */
export const startKernelWireGuard = async (ifname: string): Promise<WireGuardDevice> => {
  await runCommand(['ip', 'link', 'add', 'dev', ifname, 'type', 'wireguard']);
  let where: string[] = [];
  let name = ifname;
  let desired: { privateKey: string; listenPort: number; peers: Map<string, PeerConfig> } | undefined;
  let closed = false;
  return {
    backend: 'kernel',
    ifname,
    configure: async (config) => {
      const current = desired ?? { privateKey: config.privateKey ?? '', listenPort: 0, peers: new Map() };
      if (config.privateKey !== undefined) current.privateKey = config.privateKey;
      if (config.listenPort !== undefined) current.listenPort = config.listenPort;
      if (config.replacePeers) current.peers.clear();
      for (const key of config.removePeers ?? []) current.peers.delete(key);
      for (const peer of config.peers ?? []) current.peers.set(peer.publicKey, peer);
      desired = current;
      // wg reads the configuration from a file (it cannot open a pipe's /dev/stdin): a private one, removed at once.
      const dir = await mkdtemp(join(tmpdir(), 'gpunet-wg-'));
      const file = join(dir, `${ifname}.conf`);
      try {
        await writeFile(
          file,
          wgConfText(current.privateKey, current.listenPort, [...current.peers.values()]),
          {
            mode: 0o600,
          },
        );
        await runCommand([...where, 'wg', 'setconf', name, file]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    state: async () => parseWgDump(await runCommand([...where, 'wg', 'show', name, 'dump'])),
    moveTo: async (ns) => {
      await moveLink(ifname, ns);
      where = inNetns(ns);
    },
    renamed: (next) => {
      name = next;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await runCommand([...where, 'ip', 'link', 'del', 'dev', name]).catch((error: unknown) => {
        if (!(error instanceof CommandError)) throw error;
      });
    },
  };
};

/** Whether this kernel has WireGuard (tries to create and delete a throwaway interface). */
export const kernelWireGuardAvailable = async (): Promise<boolean> => {
  const probe = `gpnprobe${process.pid % 10_000}`;
  try {
    await runCommand(['ip', 'link', 'add', 'dev', probe, 'type', 'wireguard']);
  } catch {
    return false;
  }
  await runCommand(['ip', 'link', 'del', 'dev', probe]).catch(() => undefined);
  return true;
};
