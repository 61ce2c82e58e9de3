import { GpuRequirementSchema, LocationSchema } from '@gpunet/ensemble-spec';
import { z } from 'zod';
import { defineQuery } from '../../query';
import { EdgeIdSchema, UtcTimestampSchema } from '../primitives';
import { ComputeCapabilityValueSchema } from './inventory.schemas';
import { IsolationLevelSchema } from './isolation.schemas';
import { PolicySummarySchema } from './policy.schemas';
import { ByteCountSchema, EdgeAssetSchema, MinorAmountSchema } from './providers.schemas';

export const CandidateGpuSchema = z.strictObject({
  uuid: z.string(),
  index: z.int(),
  vendor: z.enum(['nvidia', 'amd']),
  model: z.string(),
  vramBytes: ByteCountSchema,
  computeCapability: ComputeCapabilityValueSchema.nullable(),
  cudaVersion: z.string().nullable(),
  rocmVersion: z.string().nullable(),
  architecture: z.string().nullable(),
  pciBusId: z.string().nullable(),
  /** The provider's floor for this GPU per hour in `asset`; null: none. */
  priceFloorMinor: MinorAmountSchema.nullable(),
  /** Indices of GPUs on the same host reachable over NVLink/xGMI. */
  directPeers: z.array(z.int()),
});
export type CandidateGpu = z.infer<typeof CandidateGpuSchema>;

export const CandidateProviderSchema = z.strictObject({
  providerId: EdgeIdSchema,
  name: z.string(),
  /** Declared, not detected, hardware: a simulated edge. */
  simulated: z.boolean(),
  /** The isolation the edge runs ranks with (`host-process` where it reported none). */
  isolation: IsolationLevelSchema,
  cpuArchitecture: z.string(),
  cpuMillicores: z.int().min(0),
  memoryBytes: ByteCountSchema,
  location: PolicySummarySchema.shape.location,
  subnets: z.array(z.string()),
  maxGpusPerJob: z.int(),
  maxJobDurationMs: z.int().nullable(),
  asset: EdgeAssetSchema,
  /** The provider's free, shared GPUs that meet the requirement, by index. */
  gpus: z.array(CandidateGpuSchema).min(1),
});
export type CandidateProvider = z.infer<typeof CandidateProviderSchema>;

export const FindCandidates = defineQuery({
  name: 'discovery.candidates',
  version: 1,
  description:
    'Online providers with free, shared GPUs that meet a normalized GPU requirement (ensemble spec), paged by provider.',
  request: z.strictObject({
    /** `resources.gpus` of a normalized allocation. */
    gpu: GpuRequirementSchema,
    /** Only providers that can give at least this many matching GPUs to one job. Default 1. */
    minGpusPerProvider: z.int().min(1).max(64).default(1),
    /** Only providers sharing at least this much CPU/memory. Default 0. */
    minCpuMillicores: z.int().min(0).default(0),
    minMemoryBytes: ByteCountSchema.default(0),
    cpuArchitecture: z.enum(['amd64', 'arm64']).nullable().default(null),
    /** Only providers that joined this subnet. */
    subnet: z.string().max(63).nullable().default(null),
    /** Only providers whose image prefixes allow it. */
    image: z.string().max(512).nullable().default(null),
    /** Only providers that accept jobs this long. */
    maxDurationMs: z.int().min(1).nullable().default(null),
    /** Only GPUs whose floor is at most this per GPU-hour (providers pricing in another asset drop out). */
    maxPrice: z
      .strictObject({ asset: EdgeAssetSchema, perGpuHourMinor: MinorAmountSchema })
      .nullable()
      .default(null),
    location: LocationSchema.nullable().default(null),
    includeSimulated: z.boolean().default(true),
    excludeProviders: z.array(EdgeIdSchema).max(1000).default([]),
    /** Instant for availability windows; default: the server's now. */
    at: UtcTimestampSchema.nullable().default(null),
    /** `nextCursor` of the previous page. */
    cursor: z.string().max(128).nullable().default(null),
    limit: z.int().min(1).max(1000).default(200),
  }),
  response: z.strictObject({
    items: z.array(CandidateProviderSchema),
    /** null: this was the last page. */
    nextCursor: z.string().nullable(),
  }),
});
