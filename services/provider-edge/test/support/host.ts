import type { Host } from '@gpunet/contracts';

/** A plain Linux host for tests. */
export const testHost = ({
  cores = 64,
  memoryGiB = 256,
}: { cores?: number; memoryGiB?: number } = {}): Host => ({
  hostname: 'test-host',
  os: { platform: 'linux', release: '6.1.0-18-amd64', distribution: 'Debian GNU/Linux 12 (bookworm)' },
  cpu: { model: 'AMD EPYC 9654 96-Core Processor', logicalCores: cores, architecture: 'amd64' },
  memoryBytes: memoryGiB * 1024 ** 3,
  diskFreeBytes: 2 * 1024 ** 4,
  containerRuntimes: [{ name: 'docker', version: '24.0.7' }],
  addresses: [{ interface: 'eth0', address: '10.0.0.5', family: 'ipv4' }],
});
