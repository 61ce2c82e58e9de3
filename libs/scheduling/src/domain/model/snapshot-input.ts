import type { Precision } from './precision';

/**
 * The scheduler's own view of the cluster, as plain data. The scheduler service maps discovery's
 * and benchmarking's projections to it; `createSnapshot` compiles it into a `ClusterSnapshot`.
 *
 * Units are in the field names: bytes, bits per second (`Bps`), microseconds (`Us`), milliseconds
 * (`Ms`); money in integer minor units of the subnet's asset per GPU-hour (`Minor`).
 */
export type GpuVendor = 'nvidia' | 'amd';

export interface ComputeCapability {
  readonly major: number;
  readonly minor: number;
}

export interface GpuInput {
  /** Stable id (`GPU-…` on NVIDIA); what reservations and containers name. */
  readonly uuid: string;
  /** Upper-case marketing model, e.g. `H100-SXM`, `A100-80G`, `MI300X`. */
  readonly model: string;
  readonly vendor: GpuVendor;
  readonly vramBytes: number;
  /** NVIDIA only. */
  readonly computeCapability: ComputeCapability | null;
  /** AMD only, e.g. `gfx942`. */
  readonly amdArch: string | null;
  readonly driverVersion: string | null;
  /** Highest CUDA version the host's driver supports (NVIDIA), e.g. `12.4`. */
  readonly cudaVersion: string | null;
  /** ROCm version installed (AMD), e.g. `6.1.2`. */
  readonly rocmVersion: string | null;
  /** Dense TFLOPS per precision: measured by benchmarking, or declared when `tflopsMeasured` is false. */
  readonly tflops: Readonly<Partial<Record<Precision, number>>>;
  readonly tflopsMeasured: boolean;
  /** When benchmarking measured `tflops` (ISO 8601); null or absent when they are reference figures. */
  readonly tflopsMeasuredAt?: string | null;
  /** The placement (job) id holding this GPU, or null when free. */
  readonly reservedBy: string | null;
  /** Declared by a simulated edge, not detected: placed only where the request allows it. Default false. */
  readonly simulated?: boolean;
  /**
   * Where the GPU's challenges leave it (`verified`: its last challenge passed); null or absent when
   * nothing was reported. Read only by requests that require verified GPUs.
   */
  readonly verification?: GpuVerification | null;
  /** Why it stands there, in words for reasons (`challenge c-1 failed (late)`); null when nothing to say. */
  readonly verificationNote?: string | null;
}

/**
 * `pending`: not challenged yet; `verified`: its last challenge passed; `unverified`: a challenge
 * failed; `simulated`: declared by a simulated edge (never challenged, never verified).
 */
export type GpuVerification = 'pending' | 'verified' | 'unverified' | 'simulated';

export interface IntraHostLink {
  /** NVLink/xGMI when the GPUs are linked, else PCIe. Informational; the numbers below decide. */
  readonly kind: 'nvlink' | 'xgmi' | 'pcie';
  /** Per-GPU bus bandwidth in an all-reduce ring inside the host, bits/s. */
  readonly bandwidthBps: number;
  /** One hop's latency inside the host, µs. */
  readonly latencyUs: number;
}

/** A network coordinate (Vivaldi style): estimated RTT(a, b) = |a − b| (x, y) + a.height + b.height, µs. */
export interface NetworkCoordinate {
  readonly x: number;
  readonly y: number;
  readonly height: number;
}

export interface HostInput {
  /** Unique over the whole snapshot. One host is one node of a gang. */
  readonly id: string;
  readonly siteId: string;
  /** At most 32 GPUs per host. */
  readonly gpus: readonly GpuInput[];
  readonly intraHost: IntraHostLink;
  /** The host's network interface for traffic to other hosts, bits/s. */
  readonly nicBandwidthBps: number;
  /** From link measurements; null falls back to the site's coordinate. */
  readonly coordinates: NetworkCoordinate | null;
  /** The coordinate's relative error estimate (Vivaldi's local error, 0 … 1); null or absent when unknown. */
  readonly coordinatesError?: number | null;
}

export interface ProviderLocation {
  /** Two-letter continent code (EU, NA, AS, …). */
  readonly continent: string | null;
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country: string | null;
  readonly city: string | null;
  readonly asn: number | null;
  readonly isp: string | null;
}

export type Liveness = 'online' | 'draining' | 'offline';

export interface ProviderPolicy {
  /** Heartbeat state from discovery (which marks a silent edge offline). Only `online` providers take new work. */
  readonly liveness: Liveness;
  /** Most GPUs one job may hold on this provider (all its hosts together); null = no limit. */
  readonly maxGpusPerJob: number | null;
  /** The provider's asking price per GPU-hour by model (upper case), minor units. */
  readonly pricePerGpuHourMinor: Readonly<Record<string, number>>;
  /** Price for models not listed above; null = the provider offers only the listed models. */
  readonly defaultPricePerGpuHourMinor: number | null;
  /** Subnets the provider serves. A job without a subnet may use any provider. */
  readonly subnets: readonly string[];
  /**
   * How far the provider's checks have held, 0 (never trust) … 1 (every check passed): among gangs
   * equal on every other count, the more reliable wins before the seeded tie-break. Default
   * `DEFAULT_RELIABILITY`.
   */
  readonly reliability?: number;
}

/** The reliability of a provider nothing has scored yet (benchmarking starts every provider here). */
export const DEFAULT_RELIABILITY = 0.8;

export interface ProviderInput {
  readonly id: string;
  readonly location: ProviderLocation;
  readonly policy: ProviderPolicy;
  readonly hosts: readonly HostInput[];
}

export interface SiteInput {
  readonly id: string;
  /** Host-to-host bandwidth inside the site (LAN), bits/s. */
  readonly lanBandwidthBps: number;
  readonly lanRttUs: number;
  /** Where the site sits in the coordinate space; used for hosts without their own coordinate. */
  readonly coordinates: NetworkCoordinate | null;
}

/** A measured link (between two hosts, or two sites). Symmetric. */
export interface LinkInput {
  readonly a: string;
  readonly b: string;
  readonly bandwidthBps: number;
  readonly rttUs: number;
  /** When benchmarking measured it (ISO 8601); null or absent when unknown. */
  readonly measuredAt?: string | null;
  /** The pair talks through a relay; the figures are the relayed path's. */
  readonly relayed?: boolean;
  /**
   * False when only the RTT was measured: `bandwidthBps` is then an estimate, which meets no
   * bandwidth bound where `NetworkInput.estimatesMeetBounds` is false. Default true.
   */
  readonly bandwidthMeasured?: boolean;
}

export interface NetworkInput {
  readonly sites: readonly SiteInput[];
  /** Measured host pairs; they override everything else for that pair. */
  readonly hostLinks: readonly LinkInput[];
  /** Measured site pairs; used for host pairs across those sites without a measurement of their own. */
  readonly siteLinks: readonly LinkInput[];
  /** Bandwidth assumed between sites with no measurement, bits/s. */
  readonly defaultWanBandwidthBps: number;
  /** RTT assumed between sites with no measurement and no coordinates, µs. */
  readonly defaultWanRttUs: number;
  /**
   * Whether estimates meet a gang's interconnect bounds (`max_rtt`, `min_bandwidth`, and edge
   * constraints). Default true: every figure counts, measured or not (synthetic clusters, the
   * bench). False: an RTT bound needs a pair measured or estimated from network coordinates (the
   * default WAN RTT meets none), a bandwidth bound a measured bandwidth (or one site's LAN) — a pair
   * nothing has measured waits for benchmarking instead of being placed on a guess. Estimates still
   * feed the step-time objective either way.
   */
  readonly estimatesMeetBounds?: boolean;
}

export interface ClusterSnapshotInput {
  readonly providers: readonly ProviderInput[];
  readonly network: NetworkInput;
}
