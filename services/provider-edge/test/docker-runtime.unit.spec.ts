import { describe, expect, it } from 'vitest';
import { pidsEventsCandidates } from '../src/runtime/docker.runtime';

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
