import type {
  LaunchedRank,
  PayloadOf,
  PlacedAllocation,
  ProviderRegistered,
  RankStatusReported,
} from '@gpunet/contracts';
import { type NormalizedSpec, parseEnsembleSpecOrThrow } from '@gpunet/ensemble-spec';
import type { ExecutionPolicy } from '../../src/domain/job-execution.decider';
import { edgePublicKey, tagOf } from './edge-keys';

/** A test edge's id: the public key of its (derived) nkey, so its statuses can be signed. */
export const edgeId = (letter: string): string => edgePublicKey(letter);

export interface SpecOptions {
  readonly gpus?: number;
  readonly framework?: 'torchrun' | 'horovod' | 'mpi' | 'nccl' | 'custom' | null;
  readonly strategy?: 'stay_down' | 'restart_all' | 'restart_failed';
  readonly maxRestarts?: number;
  readonly maxDuration?: string;
  readonly cmd?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly progressTimeout?: string;
}

/** A process-executor spec of one allocation `main`, one GPU per rank. */
export const specOf = (o: SpecOptions = {}): NormalizedSpec => {
  const gpus = o.gpus ?? 2;
  const framework = o.framework === undefined ? 'torchrun' : o.framework;
  const strategy = o.strategy ?? 'stay_down';
  const lines = [
    'apiVersion: gpunet.io/v1',
    'kind: Ensemble',
    'metadata: { name: exec-test }',
    `max_duration: ${o.maxDuration ?? '1h'}`,
    'allocations:',
    '  main:',
    '    executor: process',
    '    execution:',
    `      cmd: ${JSON.stringify(o.cmd ?? ['python', 'train.py'])}`,
    ...(o.env ? [`      env: ${JSON.stringify(o.env)}`] : []),
    '    resources:',
    '      cpu: { cores: 2 }',
    '      ram: { size: 4GiB }',
    `      gpus: { count: ${gpus}, vendor: nvidia }`,
    ...(framework === null
      ? []
      : ['    distributed:', `      framework: ${framework}`, '      gpus_per_rank: 1']),
    '    failure_recovery:',
    `      strategy: ${strategy}`,
    ...(strategy === 'stay_down' ? [] : [`      max_restarts: ${o.maxRestarts ?? 1}`]),
    ...(o.progressTimeout === undefined ? [] : [`      progress_timeout: ${o.progressTimeout}`]),
  ];
  return parseEnsembleSpecOrThrow(lines.join('\n'));
};

/** A placement of `main` on the given edges, `perNode` GPUs (and ranks) each. */
export const placementOf = (edges: readonly string[], perNode = 1, name = 'main'): PlacedAllocation[] => [
  {
    name,
    gpuCount: edges.length * perNode,
    nodes: edges.map((e) => ({
      providerId: e,
      hostId: `host-U${tagOf(e, 5)}`,
      gpuUuids: Array.from({ length: perNode }, (_, i) => `GPU-${tagOf(e, 4)}-${i}`),
      reservationId: `res-${tagOf(e, 6)}`,
      ranks: perNode,
    })),
    predictedStepUs: 1000,
    pricePerHourMinor: '300',
  },
];

/** The deadlines the decider tests run with. */
export const POLICY: ExecutionPolicy = {
  barrierMs: 60_000,
  heartbeatTimeoutMs: 120_000,
  usageReportMs: 30_000,
  stopWaitMs: 20_000,
};

export const T0 = '2030-01-01T00:00:00.000Z';
export const at = (seconds: number): Date => new Date(Date.parse(T0) + seconds * 1000);

export const rankStatus = (
  rank: LaunchedRank,
  init: Partial<PayloadOf<typeof RankStatusReported>> & { jobId: string },
): PayloadOf<typeof RankStatusReported> => ({
  edgeId: rank.providerId,
  // The decider never sees a signature (the handler checked it): placeholders.
  publicKey: rank.providerId,
  sequence: 1,
  signedAt: T0,
  signature: 'A'.repeat(86),
  attempt: 1,
  rank: rank.rank,
  state: 'running',
  startedAt: T0,
  exitedAt: null,
  exitCode: null,
  signal: null,
  stopReason: null,
  wallSeconds: 0,
  reportedAt: T0,
  ...init,
});

/** Discovery's `provider.registered` for an edge with one address and GPUs of one model. */
export const providerRegistered = (
  id: string,
  address: string,
  model: string,
  gpuUuids: readonly string[],
): PayloadOf<typeof ProviderRegistered> => ({
  providerId: id,
  // Edges number their reports from the wall clock in ms (beyond a 32-bit integer).
  sequence: 1_795_994_159_550,
  publicKey: id,
  name: 'edge',
  agentVersion: '0.1.0',
  at: T0,
  host: {
    hostname: 'h',
    os: { platform: 'linux', release: '6.1', distribution: null },
    cpu: { model: 'EPYC', logicalCores: 64, architecture: 'amd64' },
    memoryBytes: 512 * 1024 ** 3,
    diskFreeBytes: 10 ** 12,
    containerRuntimes: [],
    addresses: [
      { interface: 'lo', address: '127.0.0.1', family: 'ipv4' },
      { interface: 'eth0', address: 'fe80::1', family: 'ipv6' },
      { interface: 'eth0', address, family: 'ipv4' },
    ],
  },
  inventory: {
    simulated: true,
    backends: [{ name: 'simulated', status: 'ok', detail: null }],
    gpus: gpuUuids.map((uuid, index) => ({
      index,
      uuid,
      vendor: 'nvidia' as const,
      model,
      vramBytes: 80 * 1024 ** 3,
      driverVersion: null,
      cudaVersion: '12.4',
      computeCapability: { major: 9, minor: 0 },
      rocmVersion: null,
      architecture: null,
      pciBusId: null,
      mig: { enabled: false, devices: [] },
    })),
    links: [],
  },
  policy: {
    sharedGpuUuids: [...gpuUuids],
    maxGpusPerJob: 8,
    maxJobDurationMs: null,
    cpuMillicores: 60_000,
    memoryBytes: 500 * 1024 ** 3,
    images: ['*'],
    pricing: { asset: 'USDC', defaultFloorMinor: null, floors: [] },
    subnets: ['public'],
    availability: null,
    location: { continent: null, country: null, city: null },
  },
});
