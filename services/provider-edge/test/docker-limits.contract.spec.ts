import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventCollector, requireDocker, testNamespace } from '@gpunet/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_BASE_IMAGE } from '../src/infra/runtime/docker-sandbox';
import { DockerRuntime } from '../src/infra/runtime/docker.runtime';

/*
 * The CPU, memory and pids limits a rank is started with, read back by the rank from its own cgroup
 * (cgroup v1 or v2, whichever the host runs): what the kernel enforces, not only what Docker was
 * asked (docker-sandbox.unit.spec.ts asserts the flags; docker-runtime.contract.spec.ts the inspect).
 */
const docker = await requireDocker('provider-edge rank limits in the kernel');
const MiB = 1024 ** 2;

/** Prints `cpu <cores>`, `memory <bytes>`, `swap <bytes beyond memory>`, `pids <n>` from the rank's cgroup. */
const READ_CGROUP = `
import os
def read(*paths):
    for p in paths:
        if os.path.exists(p):
            return open(p).read().split()
    return None
v2 = os.path.exists('/sys/fs/cgroup/cgroup.controllers')
if v2:
    quota, period = read('/sys/fs/cgroup/cpu.max')
    memory = int(read('/sys/fs/cgroup/memory.max')[0])
    swap = int(read('/sys/fs/cgroup/memory.swap.max')[0])
    pids = read('/sys/fs/cgroup/pids.max')[0]
else:
    quota, period = read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')[0], read('/sys/fs/cgroup/cpu/cpu.cfs_period_us')[0]
    memory = int(read('/sys/fs/cgroup/memory/memory.limit_in_bytes')[0])
    memsw = read('/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes')
    swap = 'unaccounted' if memsw is None else int(memsw[0]) - memory
    pids = read('/sys/fs/cgroup/pids/pids.max')[0]
print('cgroup', 'v2' if v2 else 'v1', flush=True)
print('cpu', int(quota) / int(period), flush=True)
print('memory', memory, flush=True)
print('swap', swap, flush=True)
print('pids', pids, flush=True)
`;

describe.skipIf(!docker)('a rank’s limits are the kernel’s', () => {
  const edgeId = testNamespace('limits').replace(/_/g, '-');
  let runtime: DockerRuntime;
  let workspace = '';

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'gpunet-limits-'));
    runtime = new DockerRuntime({
      edgeId,
      docker: new Docker(),
      allowedImages: ['gpunet/'],
      limits: { maxMemoryBytes: 2 * 1024 * MiB, maxCpuMillicores: 2000, maxPids: 256 },
      pull: false,
    });
  });
  afterAll(async () => {
    await runtime?.reapOrphans(edgeId);
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  it('CPU (1.5 cores), memory (300 MiB, no swap) and pids (50) are set in the rank’s own cgroup', async () => {
    const rank = await runtime.start({
      jobId: 'job-limits',
      attempt: 1,
      rank: 0,
      image: JOB_BASE_IMAGE,
      cmd: ['python3', '-c', READ_CGROUP],
      entrypoint: null,
      env: {},
      workspace,
      workingDir: workspace,
      gpuUuids: [],
      gpuVendor: null,
      limits: { cpuMillicores: 1500, memoryBytes: 300 * MiB, pids: 50 },
      netns: null,
      labels: {},
    });
    const output = new EventCollector<string>('limits output');
    rank.onOutput((_s, line) => output.push(line));
    expect(await rank.exited).toMatchObject({ exitCode: 0 });
    const value = async (key: string) =>
      (await output.waitFor((l) => l.startsWith(`${key} `), { timeoutMs: 10_000 })).slice(key.length + 1);
    expect(await value('cpu')).toBe('1.5');
    expect(Number(await value('memory'))).toBe(300 * MiB);
    const swap = await value('swap');
    // v1 without swap accounting cannot say; where the kernel accounts swap, the rank has none.
    if (swap !== 'unaccounted') expect(Number(swap)).toBe(0);
    expect(await value('pids')).toBe('50');
  });
});
