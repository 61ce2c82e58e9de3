import { describe, expect, it } from 'vitest';
import { pidsEventsCandidates } from '../src/infra/runtime/docker.runtime';
import { sandboxLimitsFor } from '../src/infra/runtime/docker-wiring';

describe('pidsEventsCandidates: where a rank’s pids cgroup counts limit hits', () => {
  it('cgroup v1 (cgroupfs driver): the pids hierarchy', () => {
    const text = [
      '12:pids:/docker/4f1c',
      '11:memory:/docker/4f1c',
      '1:name=systemd:/docker/4f1c',
      '0::/system.slice/containerd.service',
    ].join('\n');
    expect(pidsEventsCandidates(text)).toEqual([
      '/sys/fs/cgroup/pids/docker/4f1c/pids.events',
      '/sys/fs/cgroup/system.slice/containerd.service/pids.events',
    ]);
  });

  it('cgroup v1 with combined controllers and the systemd driver', () => {
    expect(pidsEventsCandidates('5:cpu,pids:/system.slice/docker-4f1c.scope\n')).toEqual([
      '/sys/fs/cgroup/pids/system.slice/docker-4f1c.scope/pids.events',
    ]);
  });

  it('cgroup v2: the unified hierarchy', () => {
    expect(pidsEventsCandidates('0::/system.slice/docker-4f1c.scope\n', '/cg')).toEqual([
      '/cg/system.slice/docker-4f1c.scope/pids.events',
    ]);
    expect(pidsEventsCandidates('0::/\n', '/cg')).toEqual(['/cg/pids.events']);
  });

  it('ignores what it cannot read, and paths that climb out', () => {
    expect(pidsEventsCandidates('garbage\n12:pids:relative\n12:pids:/../../etc\n')).toEqual([]);
  });
});

describe('sandboxLimitsFor: what one rank may have at most', () => {
  it('is the host less what the provider keeps', () => {
    expect(
      sandboxLimitsFor(
        { images: ['*'], reserveCpuMillicores: 2_000, reserveMemoryBytes: 16 * 1024 ** 3 },
        { cpu: { model: 'x', logicalCores: 32, architecture: 'amd64' }, memoryBytes: 256 * 1024 ** 3 },
      ),
    ).toEqual({ maxCpuMillicores: 30_000, maxMemoryBytes: 240 * 1024 ** 3 });
  });
  it('never goes negative', () => {
    expect(
      sandboxLimitsFor(
        { images: ['*'], reserveCpuMillicores: 8_000, reserveMemoryBytes: 64 * 1024 ** 3 },
        { cpu: { model: 'x', logicalCores: 4, architecture: 'amd64' }, memoryBytes: 32 * 1024 ** 3 },
      ),
    ).toEqual({ maxCpuMillicores: 0, maxMemoryBytes: 0 });
  });
});
