import type { IndexedGpu, IndexedProvider } from '../../src/domain/candidate-index';

/** A GPU row as the candidate index holds it: an offered A100 80GB unless told otherwise. */
export const gpu = (index: number, over: Partial<IndexedGpu> = {}): IndexedGpu => ({
  uuid: `GPU-${index}`,
  index,
  vendor: 'nvidia',
  model: 'NVIDIA A100-SXM4-80GB',
  modelWords: ' NVIDIA A100 SXM4 80GB ',
  vramBytes: 80 * 1024 ** 3,
  cc: 80,
  computeCapability: { major: 8, minor: 0 },
  cudaVersion: '12.2',
  rocmVersion: null,
  architecture: null,
  pciBusId: null,
  priceFloorMinor: '1000000',
  floor: 1_000_000n,
  directPeers: [],
  available: true,
  ...over,
});

/** A provider row as the candidate index holds it: online, four GPUs, unless told otherwise. */
export const provider = (id: string, over: Partial<IndexedProvider> = {}): IndexedProvider => ({
  providerId: id,
  version: 1,
  status: 'online',
  name: id,
  simulated: false,
  isolation: 'container',
  isolationDetail: 'Docker containers (runc): container root is host root',
  cpuArchitecture: 'amd64',
  cpuMillicores: 64_000,
  memoryBytes: 512 * 1024 ** 3,
  location: { continent: 'EU', country: 'DE', city: null },
  subnets: ['public'],
  images: ['*'],
  maxGpusPerJob: 8,
  maxJobDurationMs: null,
  asset: 'USDC',
  availability: null,
  gpus: [0, 1, 2, 3].map((i) => gpu(i)),
  ...over,
});
