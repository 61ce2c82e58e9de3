import type { LaunchedRank } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { hostfile, layoutRanks, type LaunchNetwork, startCommands } from '../src/domain/launch-spec';
import { edgeId, placementOf, specOf } from './support/fixtures';

const [A, B] = [edgeId('A'), edgeId('B')];
const address = (node: { providerId: string }) => (node.providerId === A ? '10.0.0.1' : '10.0.0.2');
const hostNet: LaunchNetwork = { interface: null, overlayAddressOf: () => null };
const overlayNet: LaunchNetwork = {
  interface: 'gpunet0',
  overlayAddressOf: (r: LaunchedRank) => `100.96.0.${r.rank + 1}`,
};

const layout = (spec = specOf({ gpus: 4 }), placement = placementOf([A, B], 2)) => {
  const result = layoutRanks(spec, placement, address, () => 'H100-80GB');
  if (!result.ok) throw new Error(result.message);
  return result.layout;
};

describe('layoutRanks', () => {
  it('numbers ranks by node, then local rank; each rank sees its own slice of the reserved GPUs', () => {
    const l = layout();
    expect(l.worldSize).toBe(4);
    expect(l.masterAddr).toBe('10.0.0.1');
    expect(l.masterPort).toBe(29500);
    expect(
      l.ranks.map((r) => [r.rank, r.nodeRank, r.localRank, r.providerId, r.gpuUuids, r.address]),
    ).toEqual([
      [0, 0, 0, A, ['GPU-AAAA-0'], '10.0.0.1'],
      [1, 0, 1, A, ['GPU-AAAA-1'], '10.0.0.1'],
      [2, 1, 0, B, ['GPU-BBBB-0'], '10.0.0.2'],
      [3, 1, 1, B, ['GPU-BBBB-1'], '10.0.0.2'],
    ]);
  });

  it.each([
    {
      name: 'placement of an allocation the spec does not have',
      spec: specOf({ gpus: 2 }),
      placement: placementOf([A, B], 1, 'other'),
      message: /'other' is placed but not in the spec/,
    },
    {
      name: 'fewer ranks placed than the spec has',
      spec: specOf({ gpus: 4 }),
      placement: placementOf([A], 2),
      message: /has 4 ranks but 2 were placed/,
    },
  ])('refuses a $name (PLACEMENT_MISMATCH)', ({ spec, placement, message }) => {
    const result = layoutRanks(spec, placement, address, () => 'x');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('PLACEMENT_MISMATCH');
      expect(result.message).toMatch(message);
    }
  });

  it('a non-distributed allocation runs one rank with every GPU of its node', () => {
    const spec = specOf({ gpus: 1, framework: null });
    const l = layout(spec, placementOf([A], 1));
    expect(l.ranks).toHaveLength(1);
    expect(l.ranks[0]!.gpuUuids).toEqual(['GPU-AAAA-0']);
  });
});

const envOf = (
  framework: 'torchrun' | 'horovod' | 'mpi' | 'nccl' | 'custom',
  network = hostNet,
  rank = 3,
) => {
  const spec = specOf({ gpus: 4, framework, env: { MY_VAR: 'x' } });
  const built = startCommands('job-1', 2, spec, layout(spec).ranks, network);
  if (!built.ok) throw new Error(built.message);
  return built.commands[rank]!;
};

describe('startCommands', () => {
  it("on the host network, pins each rank to the interface of its own host's address", () => {
    const net: LaunchNetwork = {
      ...hostNet,
      bindInterfaceOf: (r: LaunchedRank) => (r.providerId === A ? 'eth0' : 'ens5'),
    };
    const result = startCommands('job-1', 1, specOf({ gpus: 4 }), layout().ranks, net);
    if (!result.ok) throw new Error(result.message);
    expect(result.commands.map((c) => c.env['GLOO_SOCKET_IFNAME'])).toEqual(['eth0', 'eth0', 'ens5', 'ens5']);
    expect(result.commands.map((c) => c.env['NCCL_SOCKET_IFNAME'])).toEqual([
      '=eth0',
      '=eth0',
      '=ens5',
      '=ens5',
    ]);
    // No overlay: the ranks run on the host's network.
    expect(result.commands.every((c) => c.overlay === null)).toBe(true);
  });

  it('gives every rank the rendezvous environment, its GPUs only, and the spec env', () => {
    const c = envOf('torchrun');
    expect(c).toMatchObject({
      jobId: 'job-1',
      attempt: 2,
      reservationId: 'res-BBBBBB',
      rank: 3,
      localRank: 1,
      worldSize: 4,
      runtime: 'process',
      image: null,
      cmd: ['python', 'train.py'],
      gpuUuids: ['GPU-BBBB-1'],
      limits: { cpuMillicores: 2000, memoryBytes: 4 * 1024 ** 3, pids: null },
      maxDurationMs: 3_600_000,
      overlay: null,
    });
    expect(c.env).toMatchObject({
      MY_VAR: 'x',
      RANK: '3',
      WORLD_SIZE: '4',
      LOCAL_RANK: '1',
      LOCAL_WORLD_SIZE: '2',
      NODE_RANK: '1',
      MASTER_ADDR: '10.0.0.1',
      MASTER_PORT: '29500',
      CUDA_VISIBLE_DEVICES: 'GPU-BBBB-1',
      NVIDIA_VISIBLE_DEVICES: 'GPU-BBBB-1',
      NCCL_IB_DISABLE: '1',
      GPUNET_JOB_ID: 'job-1',
      GPUNET_ATTEMPT: '2',
      GPUNET_RDZV_ENDPOINT: '10.0.0.1:29500',
      GPUNET_NNODES: '2',
      GPUNET_NPROC_PER_NODE: '2',
    });
    expect(c.env).not.toHaveProperty('NCCL_SOCKET_IFNAME');
  });

  it.each([
    { framework: 'torchrun' as const, has: {}, lacks: ['NCCL_COMM_ID', 'GPUNET_HOSTFILE', 'HOROVOD_RANK'] },
    { framework: 'nccl' as const, has: { NCCL_COMM_ID: '10.0.0.1:29500' }, lacks: ['GPUNET_HOSTFILE'] },
    {
      framework: 'mpi' as const,
      has: {
        GPUNET_HOSTFILE: '10.0.0.1 slots=2\n10.0.0.2 slots=2\n',
        OMPI_COMM_WORLD_RANK: '3',
        OMPI_COMM_WORLD_SIZE: '4',
        OMPI_COMM_WORLD_LOCAL_RANK: '1',
      },
      lacks: ['HOROVOD_RANK'],
    },
    {
      framework: 'horovod' as const,
      has: {
        GPUNET_HOSTFILE: '10.0.0.1 slots=2\n10.0.0.2 slots=2\n',
        HOROVOD_HOSTNAMES: '10.0.0.1:2,10.0.0.2:2',
        HOROVOD_RANK: '3',
        HOROVOD_SIZE: '4',
        HOROVOD_LOCAL_RANK: '1',
        HOROVOD_CROSS_RANK: '1',
        HOROVOD_CROSS_SIZE: '2',
        HOROVOD_GLOO_RENDEZVOUS_ADDR: '10.0.0.1',
        HOROVOD_CONTROLLER: 'gloo',
      },
      lacks: ['NCCL_COMM_ID'],
    },
    { framework: 'custom' as const, has: { GPUNET_FRAMEWORK: 'custom', RANK: '3' }, lacks: ['NCCL_COMM_ID'] },
  ])('$framework: framework variables', ({ framework, has, lacks }) => {
    const env = envOf(framework).env;
    expect(env).toMatchObject(has);
    for (const name of lacks) expect(env).not.toHaveProperty(name);
  });

  it('on the overlay: sockets pinned to its interface, and the rank gets its overlay address', () => {
    const c = envOf('mpi', overlayNet, 2);
    expect(c.overlay).toEqual({ interface: 'gpunet0', address: '100.96.0.3' });
    expect(c.env).toMatchObject({
      NCCL_SOCKET_IFNAME: '=gpunet0',
      GLOO_SOCKET_IFNAME: 'gpunet0',
      OMPI_MCA_btl_tcp_if_include: 'gpunet0',
    });
  });

  it('refuses an environment over the contract limit (ENV_TOO_LARGE)', () => {
    const base = specOf({ gpus: 2 });
    // More than the contract carries (the spec's own limits are per value; many values add up).
    const env = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`V${i}`, 'x']));
    const main = { ...base.allocations[0]!, execution: { ...base.allocations[0]!.execution, env } };
    const spec = { ...base, allocations: [main] };
    const l = layoutRanks(spec, placementOf([A, B]), address, () => 'x');
    if (!l.ok) throw new Error(l.message);
    const built = startCommands('job-1', 1, spec, l.layout.ranks, hostNet);
    expect(built).toMatchObject({ ok: false, code: 'ENV_TOO_LARGE' });
  });

  it('writes the hostfile as `host slots=N`, one line per node', () => {
    const l = layout();
    expect(hostfile([l.ranks.slice(0, 2), l.ranks.slice(2)])).toBe('10.0.0.1 slots=2\n10.0.0.2 slots=2\n');
  });
});
