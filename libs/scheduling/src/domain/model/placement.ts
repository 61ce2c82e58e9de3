/** The scheduler's answer for one node (host) of a gang. */
export interface NodePlacement {
  readonly providerId: string;
  readonly hostId: string;
  readonly siteId: string;
  /** The GPUs reserved on the host, fastest first. */
  readonly gpuUuids: readonly string[];
  /** Ranks on this node: `gpuUuids.length / gpusPerRank`. */
  readonly ranks: number;
}

/** The objective's breakdown for a gang (see docs/scheduling.md, "The objective"). */
export interface StepTimePrediction {
  /** compute + communication, µs. */
  readonly stepUs: number;
  /** The slowest chosen GPU's time for one step's compute, µs. */
  readonly computeUs: number;
  /** Hierarchical all-reduce: intra-host + intra-site + wide-area, µs. */
  readonly commUs: number;
  readonly intraHostUs: number;
  readonly intraSiteUs: number;
  readonly interSiteUs: number;
  /** The slowest chosen GPU's TFLOPS at the workload's precision. */
  readonly slowestTflops: number;
}

export interface AllocationPlacement {
  readonly name: string;
  readonly gpuCount: number;
  /** Sorted by site, then host id. */
  readonly nodes: readonly NodePlacement[];
  readonly prediction: StepTimePrediction;
  /** Sum of the chosen GPUs' prices per hour, minor units. */
  readonly pricePerHourMinor: number;
  /** Distinct sites. */
  readonly sites: number;
  /** Smallest pairwise bandwidth between chosen nodes (null for one node), bits/s. */
  readonly minPairBandwidthBps: number | null;
  /** Largest pairwise RTT between chosen nodes (null for one node), µs. */
  readonly maxPairRttUs: number | null;
}

/** A whole ensemble's placement: what `applyPlacement` reserves and `releasePlacement` frees. */
export interface Placement {
  /** The ensemble (job) id; every GPU here is reserved under it. */
  readonly id: string;
  readonly allocations: readonly AllocationPlacement[];
}
