import {
  DEFAULT_SLASHING_POLICY,
  type CandidateProvider,
  type JobSubmittedV1,
  type PayloadOf,
  type SubnetTrust,
} from '@gpunet/contracts';
import type { FundedJob } from '../../src/domain/placement-input';

/** A valid edge id (public user nkey shape) per letter: `edgeId('B')`. */
export const edgeId = (letter: string): string => `U${letter.repeat(55)}`;

/**
 * The trust of the subnet the fixtures' jobs run in: a test subnet (its asset settles no real
 * value) that allows simulated GPUs — `candidate` edges are simulated — and host processes, and
 * requires verified GPUs, which governs only GPUs that are not simulated. Trust tests set their own
 * (`DEFAULT_SUBNET_TRUST`).
 */
export const TEST_SUBNET_TRUST: SubnetTrust = {
  simulatedGpus: 'allowed',
  verifiedGpus: 'required',
  spotChecksPerGpuHour: 1,
  minimumIsolation: 'host-process',
};

export const fundedJob = (init: Partial<FundedJob> = {}): FundedJob => ({
  jobId: 'job-1',
  tenantId: 'tenant-a',
  subnetId: 'public',
  subnetVersion: 1,
  asset: 'USDC',
  gpus: 4,
  gpuClasses: ['H100-80GB'],
  maxDurationSeconds: 3600,
  escrow: '40000000',
  maxCharge: '36000000',
  subnetFee: '2000000',
  platformFee: '2000000',
  terms: {
    pricing: { mode: 'fixed', pricePerGpuHour: { 'H100-80GB': '3000000' } },
    maxPricePerGpuHour: '9000000',
    billingIncrementSeconds: 60,
    minimumChargeSeconds: 60,
    subnetFeeBps: 500,
    platformFeeBps: 500,
    lowEscrowBps: 1000,
    slashing: {},
    trust: TEST_SUBNET_TRUST,
    slashingPolicy: DEFAULT_SLASHING_POLICY,
  },
  fundedAt: '2030-01-01T00:00:00.000Z',
  ...init,
});

/** A candidate edge with `gpus` free H100s, running ranks in Docker containers. */
export const candidate = (id: string, gpus: number): CandidateProvider => ({
  providerId: id,
  name: `edge-${id.slice(0, 4)}`,
  simulated: true,
  isolation: 'container',
  cpuArchitecture: 'amd64',
  cpuMillicores: 64_000,
  memoryBytes: 512 * 1024 ** 3,
  location: { continent: 'EU', country: 'DE', city: null },
  subnets: ['public'],
  maxGpusPerJob: 8,
  maxJobDurationMs: null,
  asset: 'USDC',
  gpus: Array.from({ length: gpus }, (_, i) => ({
    uuid: `GPU-${id.slice(1, 5)}-${i}`,
    index: i,
    vendor: 'nvidia' as const,
    model: 'NVIDIA H100 80GB HBM3',
    vramBytes: 80 * 1024 ** 3,
    computeCapability: { major: 9, minor: 0 },
    cudaVersion: '12.4',
    rocmVersion: null,
    architecture: null,
    pciBusId: null,
    priceFloorMinor: '2000000',
    directPeers: [],
  })),
});

/** The `job.submitted` v1 (terms only, no spec) of a funded job. */
export const submittedV1 = (job: FundedJob): PayloadOf<typeof JobSubmittedV1> => ({
  jobId: job.jobId,
  tenantId: job.tenantId,
  subnetId: job.subnetId,
  asset: job.asset,
  gpus: job.gpus,
  gpuClasses: [...job.gpuClasses],
  maxPricePerGpuHour: job.terms.maxPricePerGpuHour,
  maxDurationSeconds: job.maxDurationSeconds,
  submittedAt: job.fundedAt,
});
