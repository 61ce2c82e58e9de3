import { z } from 'zod';
import { defineQuery } from '../../query';
import {
  EntityIdSchema,
  MinorUnitsSchema,
  SignedMinorUnitsSchema,
  text,
  UtcTimestampSchema,
} from '../primitives';
import { UnschedulableReasonSchema } from './job-unschedulable.v1';

const Us = z.number().min(0);
const Bps = z.number().min(0);

/**
 * Where a figure came from: `measured` by benchmarking, `estimated` from network coordinates,
 * `lan` the site's LAN, `reference` the GPU model's datasheet, `assumed` a default.
 */
export const FigureSourceSchema = z.enum(['measured', 'estimated', 'lan', 'reference', 'assumed']);

/** The core's predicted step time, split into compute and the hierarchical all-reduce, µs. */
export const StepTimePredictionSchema = z.strictObject({
  stepUs: Us,
  computeUs: Us,
  commUs: Us,
  intraHostUs: Us,
  intraSiteUs: Us,
  interSiteUs: Us,
  /** The slowest chosen GPU's TFLOPS at the workload's precision. */
  slowestTflops: z.number().min(0),
});

export const ExplainedNodeSchema = z.strictObject({
  providerId: text(128),
  hostId: text(256),
  siteId: text(256),
  gpuUuids: z.array(text(128)).min(1).max(64),
  ranks: z.int().min(1).max(64),
});

export const GpuFigureSchema = z.strictObject({
  providerId: text(128),
  hostId: text(256),
  gpuUuid: text(128),
  model: text(128),
  /** The precision whose figure was used (the workload's, else its fp16/fp32 fallback). */
  precision: text(16),
  tflops: z.number().min(0),
  source: z.enum(['measured', 'reference', 'assumed']),
  measuredAt: UtcTimestampSchema.nullable(),
  /** `measuredAt`'s age when the scheduler decided, ms. */
  ageMs: z.number().min(0).nullable(),
  /** It sets the gang's compute time. */
  slowest: z.boolean(),
});

export const LinkFigureSchema = z.strictObject({
  a: text(256),
  b: text(256),
  scope: z.enum(['intra-site', 'inter-site']),
  rttUs: Us,
  rttSource: FigureSourceSchema,
  bandwidthBps: Bps,
  bandwidthSource: FigureSourceSchema,
  /** The bandwidth is a host NIC's, lower than the link's own figure. */
  cappedByNic: z.boolean(),
  /** The rule that gave the figures: a host pair's measurement, the site LAN, a site pair's, coordinates, the defaults. */
  basis: z.enum(['host-measured', 'site-lan', 'site-measured', 'coordinates', 'default']),
  measuredAt: UtcTimestampSchema.nullable(),
  ageMs: z.number().min(0).nullable(),
  /** The measurement is of a relay path. */
  relayed: z.boolean(),
  /** Estimated RTTs: the coordinates' relative error (0 … 1), when known. */
  estimateError: z.number().min(0).nullable(),
});

export const AlternativeSchema = z.strictObject({
  nodes: z
    .array(
      z.strictObject({
        providerId: text(128),
        hostId: text(256),
        siteId: text(256),
        gpus: z.int().min(1).max(64),
      }),
    )
    .min(1)
    .max(4096),
  sites: z.int().min(1),
  gpuCount: z.int().min(1).max(4096),
  prediction: StepTimePredictionSchema,
  pricePerHourMinor: MinorUnitsSchema,
  /** The first rule of the strategy's order it lost on, or the requirement it breaks. */
  lostOn: z.enum([
    'slower',
    'pricier',
    'lower-score',
    'more-nodes',
    'fewer-nodes',
    'tie-break',
    'constraint',
    'ensemble',
  ]),
  message: z.string().max(1024),
  stepUsDelta: z.number(),
  priceDeltaMinor: SignedMinorUnitsSchema,
});

export const AllocationExplanationSchema = z.strictObject({
  name: text(128),
  gpuCount: z.int().min(1).max(4096),
  nodes: z.array(ExplainedNodeSchema).min(1).max(4096),
  sites: z.int().min(1),
  prediction: StepTimePredictionSchema,
  pricePerHourMinor: MinorUnitsSchema,
  strategy: z.enum(['pack', 'spread', 'any']),
  /** Step times within this relative distance counted as equal (then price decided). */
  stepTimeTolerance: z.number().min(0),
  /** The slowest first; at most 64. */
  gpus: z.array(GpuFigureSchema).max(64),
  gpusOmitted: z.int().min(0),
  /** Every pair of chosen nodes, wide-area and the largest RTTs first; at most 64. */
  links: z.array(LinkFigureSchema).max(64),
  linksOmitted: z.int().min(0),
  /** The best gangs not chosen, best first. */
  alternatives: z.array(AlternativeSchema).max(3),
});

/** Why the job's last placement attempt came out as it did. */
export const PlacementExplanationSchema = z.strictObject({
  jobId: EntityIdSchema,
  /** The job's placement now: `reserving` while the edges are asked, `placed` once all accepted. */
  status: z.enum(['queued', 'waiting', 'reserving', 'placed', 'unschedulable', 'cancelled']),
  /** The attempt this explains (1 = the first placement round). */
  attempt: z.int().min(0),
  explainedAt: UtcTimestampSchema,
  outcome: z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('placement'),
      allocations: z.array(AllocationExplanationSchema).min(1).max(64),
    }),
    z.strictObject({
      kind: z.literal('failure'),
      code: z.enum(['UnschedulableAndUnresolvable', 'Unschedulable', 'Error', 'RetriesExhausted']),
      allocation: z.string().max(128).nullable(),
      message: z.string().max(2048),
      reasons: z.array(UnschedulableReasonSchema).max(64),
    }),
  ]),
});
export type PlacementExplanationRecord = z.infer<typeof PlacementExplanationSchema>;

export const GetPlacementExplanation = defineQuery({
  name: 'scheduler.placement-explanation',
  version: 1,
  description:
    "Why a job is placed where it is (chosen nodes, predicted step time, every figure with its source and age, the best alternatives and why they lost), or why it is not; null before the scheduler's first attempt.",
  request: z.strictObject({ jobId: EntityIdSchema }),
  response: z.strictObject({ explanation: PlacementExplanationSchema.nullable() }),
});
