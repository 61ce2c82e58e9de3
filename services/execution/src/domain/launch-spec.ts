import {
  type LaunchedRank,
  MAX_RANK_ENV_BYTES,
  MAX_RANK_ENV_ENTRIES,
  type PayloadOf,
  type PlacedAllocation,
  type StartRankOnEdge,
} from '@gpunet/contracts';
import type { Allocation, NormalizedSpec } from '@gpunet/ensemble-spec';

/*
 * The launch of a placed gang, in two pure steps:
 * 1. `layoutRanks`: who is which rank where (rank numbering, node ranks, each rank's GPUs, rank 0's
 *    address) from the spec and the scheduler's placement — fixed for the whole job and recorded
 *    in `job.launching`, so every attempt and a restarted service start the very same ranks;
 * 2. `startCommands`: each rank's `StartRankOnEdge` (argv, image and the environment a framework's
 *    launcher would have given it) for one attempt.
 */

/** torch's default rendezvous port; used when a spec has no `distributed` section. */
export const DEFAULT_MASTER_PORT = 29500;

/** What the network port says about a node: the address peers reach it at. */
export type AddressOf = (node: { readonly providerId: string; readonly hostId: string }) => string;
/** The GPU class billed for a node's GPUs (see `gpuClassOf` in usage.ts). */
export type GpuClassOf = (node: {
  readonly providerId: string;
  readonly gpuUuids: readonly string[];
}) => string;

export interface RankLayout {
  readonly ranks: readonly LaunchedRank[];
  readonly worldSize: number;
  readonly masterAddr: string;
  readonly masterPort: number;
}

/** Why a placement cannot be launched as the spec says; becomes `job.failed` with this code. */
export interface LaunchProblem {
  readonly code: 'SPEC_MISSING' | 'PLACEMENT_MISMATCH' | 'ENV_TOO_LARGE';
  readonly message: string;
}

export type LayoutResult =
  { readonly ok: true; readonly layout: RankLayout } | ({ readonly ok: false } & LaunchProblem);

const gpusPerRankOf = (
  allocation: Allocation,
  node: { gpuUuids: readonly string[]; ranks: number },
): number => {
  if (allocation.resources.gpus === null) return 0;
  // Not distributed: one rank that sees every GPU reserved for it on its node.
  if (allocation.distributed === null) return Math.floor(node.gpuUuids.length / node.ranks);
  return allocation.distributed.gpusPerRank;
};

/**
 * Numbers the ranks of every placed allocation: allocations in placement order, nodes in placement
 * order (node rank = index), ranks on a node consecutive (local rank = index on the node); each
 * rank sees its own slice of the node's reserved GPUs. `rank` is unique in the job (the edges key
 * their idempotency on it); the environment's RANK counts within the allocation.
 */
export const layoutRanks = (
  spec: NormalizedSpec,
  placement: readonly PlacedAllocation[],
  addressOf: AddressOf,
  gpuClassOf: GpuClassOf,
): LayoutResult => {
  const ranks: LaunchedRank[] = [];
  let masterAddr: string | null = null;
  let masterPort = DEFAULT_MASTER_PORT;
  for (const placed of placement) {
    const allocation = spec.allocations.find((a) => a.name === placed.name);
    if (!allocation)
      return {
        ok: false,
        code: 'PLACEMENT_MISMATCH',
        message: `allocation '${placed.name}' is placed but not in the spec`,
      };
    const placedRanks = placed.nodes.reduce((n, node) => n + node.ranks, 0);
    if (placedRanks !== allocation.ranks)
      return {
        ok: false,
        code: 'PLACEMENT_MISMATCH',
        message: `allocation '${placed.name}' has ${allocation.ranks} ranks but ${placedRanks} were placed`,
      };
    for (const [nodeRank, node] of placed.nodes.entries()) {
      const perRank = gpusPerRankOf(allocation, node);
      if (perRank * node.ranks > node.gpuUuids.length)
        return {
          ok: false,
          code: 'PLACEMENT_MISMATCH',
          message: `node ${nodeRank} of '${placed.name}' runs ${node.ranks} ranks × ${perRank} GPUs but reserved ${node.gpuUuids.length}`,
        };
      const address = addressOf(node);
      const gpuClass = gpuClassOf(node);
      for (let localRank = 0; localRank < node.ranks; localRank++) {
        ranks.push({
          rank: ranks.length,
          localRank,
          nodeRank,
          allocation: placed.name,
          providerId: node.providerId,
          hostId: node.hostId,
          reservationId: node.reservationId,
          gpuUuids: node.gpuUuids.slice(localRank * perRank, (localRank + 1) * perRank),
          gpuClass,
          address,
        });
      }
    }
    if (masterAddr === null) {
      masterAddr = addressOf(placed.nodes[0]!);
      masterPort = allocation.distributed?.rendezvousPort ?? DEFAULT_MASTER_PORT;
    }
  }
  return { ok: true, layout: { ranks, worldSize: ranks.length, masterAddr: masterAddr ?? '', masterPort } };
};

/** The network the ranks live on, as the `RankNetwork` port prepared it. */
export interface LaunchNetwork {
  /** The interface ranks must bind to (`gpunet0` on the overlay); null: the host's network. */
  readonly interface: string | null;
  /** The rank's own address on that interface, when it has one (overlay). */
  readonly overlayAddressOf: (rank: LaunchedRank) => string | null;
  /** The interface a rank pins its collectives to; default `interface`. */
  readonly bindInterfaceOf?: (rank: LaunchedRank) => string | null;
}

export type StartRankCommand = PayloadOf<typeof StartRankOnEdge>;

export type StartCommandsResult =
  | { readonly ok: true; readonly commands: readonly StartRankCommand[] }
  | ({ readonly ok: false } & LaunchProblem);

interface AllocationWorld {
  readonly allocation: Allocation;
  readonly ranks: readonly LaunchedRank[];
  /** Ranks per node rank, in node order. */
  readonly nodes: readonly (readonly LaunchedRank[])[];
  readonly master: LaunchedRank;
  readonly masterPort: number;
}

const worldsOf = (spec: NormalizedSpec, ranks: readonly LaunchedRank[]): Map<string, AllocationWorld> => {
  const worlds = new Map<string, AllocationWorld>();
  for (const name of new Set(ranks.map((r) => r.allocation))) {
    const allocation = spec.allocations.find((a) => a.name === name)!;
    const mine = ranks.filter((r) => r.allocation === name);
    const nodes: LaunchedRank[][] = [];
    for (const r of mine) (nodes[r.nodeRank] ??= []).push(r);
    worlds.set(name, {
      allocation,
      ranks: mine,
      nodes,
      master: mine[0]!,
      masterPort: allocation.distributed?.rendezvousPort ?? DEFAULT_MASTER_PORT,
    });
  }
  return worlds;
};

/** The MPI/Horovod hostfile: one line `host slots=N` per node, in node-rank order. */
export const hostfile = (nodes: readonly (readonly LaunchedRank[])[]): string =>
  nodes.map((ranks) => `${ranks[0]!.address} slots=${ranks.length}\n`).join('');

/**
 * The environment gpunet gives one rank (the spec's own variables come first and can never
 * override these: the gateway refuses reserved names). Every framework gets torch's env://
 * rendezvous variables — one process per rank, as torchrun would start it, so a training script
 * runs unchanged — and the framework-specific ones on top.
 */
export const rankEnv = (
  jobId: string,
  attempt: number,
  world: AllocationWorld,
  rank: LaunchedRank,
  network: LaunchNetwork,
): Record<string, string> => {
  const { allocation, nodes, master, masterPort } = world;
  const allocationRank = world.ranks.indexOf(rank);
  const node = nodes[rank.nodeRank] ?? [rank];
  const worldSize = world.ranks.length;
  const framework = allocation.distributed?.framework ?? 'custom';
  const devices = rank.gpuUuids.join(',');
  const RANK = String(allocationRank);
  const WORLD_SIZE = String(worldSize);
  const LOCAL_RANK = String(rank.localRank);
  const LOCAL_WORLD_SIZE = String(node.length);
  const NODE_RANK = String(rank.nodeRank);
  const env: Record<string, string> = {
    RANK,
    WORLD_SIZE,
    LOCAL_RANK,
    LOCAL_WORLD_SIZE,
    NODE_RANK,
    GROUP_RANK: String(rank.nodeRank),
    MASTER_ADDR: master.address,
    MASTER_PORT: String(masterPort),
    // gangs span providers over IP: InfiniBand addresses are never routable between them.
    NCCL_IB_DISABLE: '1',
    GPUNET_JOB_ID: jobId,
    GPUNET_ATTEMPT: String(attempt),
    GPUNET_ALLOCATION: allocation.name,
    GPUNET_GLOBAL_RANK: String(rank.rank),
    GPUNET_NNODES: String(nodes.length),
    GPUNET_NPROC_PER_NODE: String(node.length),
    GPUNET_RDZV_ENDPOINT: `${master.address}:${masterPort}`,
    GPUNET_RDZV_ID: `${jobId}-${attempt}`,
    GPUNET_FRAMEWORK: framework,
  };
  if (allocation.resources.gpus?.vendor === 'amd') {
    env['HIP_VISIBLE_DEVICES'] = devices;
    env['ROCR_VISIBLE_DEVICES'] = devices;
  } else {
    // Only the reserved GPUs: the process runtime has nothing else keeping the rank off the others.
    env['CUDA_VISIBLE_DEVICES'] = devices;
    env['NVIDIA_VISIBLE_DEVICES'] = rank.gpuUuids.length > 0 ? devices : 'void';
  }
  const ifname = network.bindInterfaceOf?.(rank) ?? network.interface;
  if (ifname !== null) {
    env['NCCL_SOCKET_IFNAME'] = `=${ifname}`;
    env['NCCL_SOCKET_FAMILY'] = 'AF_INET';
    env['GLOO_SOCKET_IFNAME'] = ifname;
    env['TP_SOCKET_IFNAME'] = ifname;
  }
  switch (framework) {
    case 'torchrun':
    case 'custom':
      break;
    case 'nccl':
      // NCCL's own bootstrap root (ncclGetUniqueId without an out-of-band exchange).
      env['NCCL_COMM_ID'] = `${master.address}:${masterPort}`;
      break;
    case 'mpi':
      env['GPUNET_HOSTFILE'] = hostfile(nodes);
      env['OMPI_COMM_WORLD_RANK'] = RANK;
      env['OMPI_COMM_WORLD_SIZE'] = WORLD_SIZE;
      env['OMPI_COMM_WORLD_LOCAL_RANK'] = LOCAL_RANK;
      env['OMPI_COMM_WORLD_LOCAL_SIZE'] = LOCAL_WORLD_SIZE;
      env['OMPI_COMM_WORLD_NODE_RANK'] = NODE_RANK;
      if (ifname !== null) {
        env['OMPI_MCA_btl_tcp_if_include'] = ifname;
        env['OMPI_MCA_oob_tcp_if_include'] = ifname;
      }
      break;
    case 'horovod':
      // What `horovodrun --gloo` gives each worker: Gloo rendezvous on rank 0's host.
      env['GPUNET_HOSTFILE'] = hostfile(nodes);
      env['HOROVOD_HOSTNAMES'] = nodes.map((n) => `${n[0]!.address}:${n.length}`).join(',');
      env['HOROVOD_RANK'] = RANK;
      env['HOROVOD_SIZE'] = WORLD_SIZE;
      env['HOROVOD_LOCAL_RANK'] = LOCAL_RANK;
      env['HOROVOD_LOCAL_SIZE'] = LOCAL_WORLD_SIZE;
      env['HOROVOD_CROSS_RANK'] = String(rank.nodeRank);
      env['HOROVOD_CROSS_SIZE'] = String(nodes.length);
      env['HOROVOD_HOSTNAME'] = rank.address;
      env['HOROVOD_CONTROLLER'] = 'gloo';
      env['HOROVOD_CPU_OPERATIONS'] = 'gloo';
      env['HOROVOD_GLOO_RENDEZVOUS_ADDR'] = master.address;
      env['HOROVOD_GLOO_RENDEZVOUS_PORT'] = String(masterPort);
      if (ifname !== null) env['HOROVOD_GLOO_IFACE'] = ifname;
      break;
    default: {
      const never: never = framework;
      throw new Error(`unknown framework ${String(never)}`);
    }
  }
  return { ...allocation.execution.env, ...env };
};

const envBytes = (env: Record<string, string>): number =>
  Object.entries(env).reduce((n, [k, v]) => n + k.length + v.length, 0);

/** Every rank's start command for `attempt`. */
export const startCommands = (
  jobId: string,
  attempt: number,
  spec: NormalizedSpec,
  ranks: readonly LaunchedRank[],
  network: LaunchNetwork,
): StartCommandsResult => {
  const worlds = worldsOf(spec, ranks);
  const commands: StartRankCommand[] = [];
  for (const rank of ranks) {
    const world = worlds.get(rank.allocation)!;
    const { allocation } = world;
    const env = rankEnv(jobId, attempt, world, rank, network);
    if (Object.keys(env).length > MAX_RANK_ENV_ENTRIES || envBytes(env) > MAX_RANK_ENV_BYTES)
      return {
        ok: false,
        code: 'ENV_TOO_LARGE',
        message: `rank ${rank.rank}'s environment exceeds ${MAX_RANK_ENV_ENTRIES} entries or ${MAX_RANK_ENV_BYTES} bytes`,
      };
    const workingDir = allocation.execution.workingDir;
    const overlayAddress = network.overlayAddressOf(rank);
    commands.push({
      jobId,
      attempt,
      reservationId: rank.reservationId,
      allocation: rank.allocation,
      rank: rank.rank,
      localRank: rank.localRank,
      worldSize: world.ranks.length,
      runtime: allocation.executor,
      image: allocation.executor === 'docker' ? allocation.execution.image : null,
      cmd: allocation.execution.cmd,
      entrypoint: allocation.execution.entrypoint,
      env,
      // The contract's working directory is relative to the rank workspace; a docker spec's is an
      // absolute path inside the image, which the contract cannot carry yet (reported in ADR 0040).
      workingDir: workingDir !== null && !workingDir.startsWith('/') ? workingDir : null,
      gpuUuids: rank.gpuUuids,
      limits: {
        cpuMillicores: allocation.resources.cpuMillicores,
        memoryBytes: allocation.resources.ramBytes,
        pids: null,
      },
      maxDurationMs: allocation.maxDurationMs,
      progressTimeoutMs: allocation.failureRecovery.progressTimeoutMs,
      overlay:
        network.interface !== null && overlayAddress !== null
          ? { interface: network.interface, address: overlayAddress }
          : null,
    });
  }
  return { ok: true, commands };
};
