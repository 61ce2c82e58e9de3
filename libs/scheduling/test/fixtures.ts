import {
  type ClusterSnapshot,
  type ClusterSnapshotInput,
  type CompiledGpu,
  type CompiledHost,
  type CompiledProvider,
  createSnapshot,
  DEFAULT_WORKLOAD,
  type GangRequest,
  gangRequest,
  GPU_CATALOG,
  type GpuInput,
  type HostInput,
  type LinkInput,
  type PreFilterContext,
  type ProviderInput,
  type ProviderPolicy,
  type SiteInput,
} from '../src';

let seq = 0;

/** A GPU of a catalog model (datasheet figures), with overrides. */
export const gpu = (model = 'A100-80G', over: Partial<GpuInput> = {}): GpuInput => {
  const spec = GPU_CATALOG[model];
  if (spec === undefined) throw new Error(`unknown model ${model}`);
  return {
    uuid: `GPU-${seq++}`,
    model: spec.model,
    vendor: spec.vendor,
    vramBytes: spec.vramBytes,
    computeCapability: spec.computeCapability,
    amdArch: spec.amdArch,
    driverVersion: spec.vendor === 'nvidia' ? '550.90' : null,
    cudaVersion: spec.vendor === 'nvidia' ? '12.4' : null,
    rocmVersion: spec.vendor === 'amd' ? '6.1.3' : null,
    tflops: spec.tflops,
    tflopsMeasured: true,
    reservedBy: null,
    ...over,
  };
};

export const gpus = (n: number, model = 'A100-80G', over: Partial<GpuInput> = {}): GpuInput[] =>
  Array.from({ length: n }, () => gpu(model, over));

export const host = (
  id: string,
  siteId: string,
  list: GpuInput[],
  over: Partial<HostInput> = {},
): HostInput => ({
  id,
  siteId,
  gpus: list,
  intraHost: GPU_CATALOG[list[0]?.model ?? 'A100-80G']?.intraHost ?? {
    kind: 'pcie',
    bandwidthBps: 2e11,
    latencyUs: 8,
  },
  nicBandwidthBps: 100e9,
  coordinates: null,
  ...over,
});

export const policy = (over: Partial<ProviderPolicy> = {}): ProviderPolicy => ({
  liveness: 'online',
  maxGpusPerJob: null,
  pricePerGpuHourMinor: {},
  defaultPricePerGpuHourMinor: 1_000_000,
  subnets: ['public'],
  ...over,
});

export const provider = (
  id: string,
  hosts: HostInput[],
  over: Partial<Omit<ProviderInput, 'policy'>> & { policy?: Partial<ProviderPolicy> } = {},
): ProviderInput => ({
  id,
  location: { continent: 'EU', country: 'DE', city: 'Berlin', asn: 64_500, isp: null },
  hosts,
  ...over,
  policy: policy(over.policy),
});

export const site = (id: string, over: Partial<SiteInput> = {}): SiteInput => ({
  id,
  lanBandwidthBps: 100e9,
  lanRttUs: 50,
  coordinates: null,
  ...over,
});

export const cluster = (
  providers: ProviderInput[],
  sites: SiteInput[],
  over: {
    hostLinks?: LinkInput[];
    siteLinks?: LinkInput[];
    defaultWanBandwidthBps?: number;
    defaultWanRttUs?: number;
  } = {},
): ClusterSnapshotInput => ({
  providers,
  network: {
    sites,
    hostLinks: over.hostLinks ?? [],
    siteLinks: over.siteLinks ?? [],
    defaultWanBandwidthBps: over.defaultWanBandwidthBps ?? 10e9,
    defaultWanRttUs: over.defaultWanRttUs ?? 40_000,
  },
});

/** One provider with one host of `n` GPUs: the smallest snapshot for a plugin's table. */
export const oneHost = (
  list: GpuInput[],
  over: Parameters<typeof provider>[2] = {},
  hostOver: Partial<HostInput> = {},
) => createSnapshot(cluster([provider('p0', [host('h0', 's0', list, hostOver)], over)], [site('s0')]));

/** The compiled first host, its provider and its GPUs of a snapshot. */
export const firstHost = (
  s: ClusterSnapshot,
): { host: CompiledHost; provider: CompiledProvider; gpus: readonly CompiledGpu[] } => {
  const host = s.inventory.hosts[0]!;
  return {
    host,
    provider: s.inventory.providers[host.providerIndex]!,
    gpus: s.inventory.gpus.slice(host.gpuStart, host.gpuStart + host.gpuCount),
  };
};

export const ctxOf = (
  snapshot: ClusterSnapshot,
  request: Partial<GangRequest> & { gpuCount?: number } = {},
): PreFilterContext => {
  const r = gangRequest({ gpuCount: 1, ...request });
  return { request: r, inventory: snapshot.inventory, workload: r.workload ?? DEFAULT_WORKLOAD, snapshot };
};

export const GB = 1e9;
