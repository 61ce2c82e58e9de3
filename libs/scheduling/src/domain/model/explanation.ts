import type { LinkSource } from '../snapshot/network';
import type { AllocationPlacement, StepTimePrediction } from './placement';
import type { Precision } from './precision';
import type { PlacementStrategy } from './request';

/**
 * Where a figure the objective used came from:
 * - `measured`: benchmarking measured it (a GPU's TFLOPS, a host or site pair's link);
 * - `estimated`: network coordinates (an RTT; with the coordinates' error when known);
 * - `lan`: the site's LAN figures (both hosts at one site, no measurement of their own);
 * - `reference`: the GPU model's datasheet figure (not measured on this GPU);
 * - `assumed`: a default (the snapshot's WAN bandwidth or RTT; a GPU with no TFLOPS figure at all).
 */
export type FigureSource = 'measured' | 'estimated' | 'lan' | 'reference' | 'assumed';

/** One chosen GPU's speed as the objective used it. */
export interface GpuFigure {
  readonly providerId: string;
  readonly hostId: string;
  readonly gpuUuid: string;
  readonly model: string;
  /** The precision whose figure was used: the workload's, else its fp16/fp32 fallback. */
  readonly precision: Precision;
  readonly tflops: number;
  readonly source: 'measured' | 'reference' | 'assumed';
  /** When it was measured (ISO 8601); null unless measured and dated. */
  readonly measuredAt: string | null;
  /** This GPU sets the gang's compute time (the slowest chosen). */
  readonly slowest: boolean;
}

/** The network between two chosen nodes as the objective used it. */
export interface LinkFigure {
  /** Host ids, `a < b`. */
  readonly a: string;
  readonly b: string;
  readonly scope: 'intra-site' | 'inter-site';
  readonly rttUs: number;
  readonly rttSource: FigureSource;
  /** After the two hosts' NIC caps. */
  readonly bandwidthBps: number;
  readonly bandwidthSource: FigureSource;
  /** The bandwidth is a NIC's, lower than the link's own figure. */
  readonly cappedByNic: boolean;
  /** The rule that gave the figures (see `hostLink`). */
  readonly basis: LinkSource;
  /** When the link was measured (ISO 8601); null unless measured and dated. */
  readonly measuredAt: string | null;
  /** The measurement is of a relay path (the pair does not talk directly). */
  readonly relayed: boolean;
  /** Estimated RTTs: the larger of the two coordinates' relative errors (0 … 1); null when unknown. */
  readonly estimateError: number | null;
}

/**
 * Why a gang the search evaluated was not chosen, by the first rule of the strategy's order it lost
 * on (pack: step time within the tolerance, price, score, nodes; spread: nodes first; any: price
 * first): `constraint` — it breaks an interconnect requirement (found by a search without them);
 * `ensemble` — it ranked better alone but the ensemble's other allocations did not fit beside it.
 */
export type LossReason =
  | 'slower'
  | 'pricier'
  | 'lower-score'
  | 'more-nodes'
  | 'fewer-nodes'
  | 'tie-break'
  | 'constraint'
  | 'ensemble';

export interface AlternativeNode {
  readonly providerId: string;
  readonly hostId: string;
  readonly siteId: string;
  readonly gpus: number;
}

/** A gang the search evaluated and did not choose. */
export interface Alternative {
  /** Sorted by site, then host id. */
  readonly nodes: readonly AlternativeNode[];
  readonly sites: number;
  readonly gpuCount: number;
  readonly prediction: StepTimePrediction;
  readonly pricePerHourMinor: number;
  readonly lostOn: LossReason;
  /** One sentence: "slower: 41.3 ms per step vs 30.1 ms (+37%)". */
  readonly message: string;
  /** Its step time minus the chosen one's, µs. */
  readonly stepUsDelta: number;
  /** Its price minus the chosen one's, minor units per hour. */
  readonly priceDeltaMinor: number;
}

export interface AllocationExplanation {
  /** What was chosen: nodes, the prediction (compute vs communication), price. */
  readonly placement: AllocationPlacement;
  readonly strategy: PlacementStrategy;
  /** Step times within this relative distance counted as equal. */
  readonly stepTimeTolerance: number;
  /** The slowest first; at most `MAX_GPU_FIGURES`. */
  readonly gpus: readonly GpuFigure[];
  readonly gpusOmitted: number;
  /** Every pair of chosen nodes, wide-area pairs and the largest RTTs first; at most `MAX_LINK_FIGURES`. */
  readonly links: readonly LinkFigure[];
  readonly linksOmitted: number;
  /**
   * The best gangs not chosen, best first, one per node set (hosts and GPUs per host: the best of
   * gangs that differ only in which GPUs of a host), never the chosen nodes; at most `MAX_ALTERNATIVES`.
   */
  readonly alternatives: readonly Alternative[];
}

/** Why a placement is what it is, per allocation (in the placement's order). */
export interface PlacementExplanation {
  readonly id: string;
  readonly allocations: readonly AllocationExplanation[];
}

/** Bounds that keep an explanation small whatever the gang's size. */
export const MAX_GPU_FIGURES = 64;
export const MAX_LINK_FIGURES = 64;
export const MAX_ALTERNATIVES = 3;
