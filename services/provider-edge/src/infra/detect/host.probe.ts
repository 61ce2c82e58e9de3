import type { Host } from '@gpunet/contracts';
import { statfs } from 'node:fs/promises';
import os from 'node:os';
import type { HostOverride } from '../../domain/detection/simulated-inventory';
import type { CommandRunner } from '../command-runner';

const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };
const RUNTIMES = ['docker', 'podman', 'containerd'] as const;

const clip = (s: string, max: number, fallback: string): string =>
  s.trim() === '' ? fallback : s.trim().slice(0, max);

/**
 * CPU, memory, free disk (where job data goes), OS, container runtimes and addresses of this host.
 * A simulated edge may override CPU, memory and disk to stand in for a bigger server.
 */
export const probeHost = async (options: {
  readonly workDir: string;
  readonly run: CommandRunner;
  readonly readText: (path: string) => Promise<string | undefined>;
  readonly override?: HostOverride;
}): Promise<Host> => {
  const { workDir, run, readText, override = {} } = options;
  const osRelease = (await readText('/etc/os-release')) ?? '';
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? null;
  const diskFreeBytes = await statfs(workDir).then(
    (fs) => Number(fs.bavail) * Number(fs.bsize),
    () => 0,
  );
  const runtimes: Host['containerRuntimes'] = [];
  for (const name of RUNTIMES) {
    const r = await run(name, ['--version']);
    if (r.found && r.code === 0)
      runtimes.push({ name, version: /([0-9]+\.[0-9]+\.[0-9]+)/.exec(r.stdout)?.[1] ?? null });
  }
  const addresses: Host['addresses'] = Object.entries(os.networkInterfaces())
    .flatMap(([name, list]) =>
      (list ?? [])
        .filter((a) => !a.internal)
        .map((a) => ({
          interface: clip(name, 64, '?'),
          address: a.address.slice(0, 64),
          family: a.family === 'IPv6' ? ('ipv6' as const) : ('ipv4' as const),
        })),
    )
    .slice(0, 64);
  return {
    hostname: clip(os.hostname(), 253, 'unknown'),
    os: {
      platform: clip(os.platform(), 32, 'unknown'),
      release: clip(os.release(), 128, 'unknown'),
      distribution: pretty ? clip(pretty, 128, 'unknown') : null,
    },
    cpu: {
      model: clip(os.cpus()[0]?.model ?? '', 256, 'unknown'),
      logicalCores: override.logicalCores ?? Math.max(1, os.availableParallelism()),
      architecture: override.architecture ?? ARCH[os.arch()] ?? clip(os.arch(), 32, 'unknown'),
    },
    memoryBytes: override.memoryBytes ?? os.totalmem(),
    diskFreeBytes: override.diskFreeBytes ?? diskFreeBytes,
    containerRuntimes: runtimes,
    addresses,
  };
};
