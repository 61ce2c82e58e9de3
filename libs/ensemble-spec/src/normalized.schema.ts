import { z } from 'zod';
import {
  ALLOCATION_TYPES,
  CONTINENTS,
  CPU_ARCHITECTURES,
  EXECUTORS,
  FRAMEWORKS,
  GPU_VENDORS,
  PLACEMENTS,
  PRECISIONS,
  RECOVERY_STRATEGIES,
} from './source.schema';

/**
 * The canonical normalized form every service consumes (gateway → `job.submitted`, scheduler filters,
 * settlement escrow, execution). Everything is explicit: defaults applied, absent values are `null`,
 * lists sorted, names sorted, and every quantity an integer in the unit its field name says:
 * bytes, bits per second (`Bps` = bits/s), milliseconds, microseconds, millicores; money in minor units
 * of the asset as a decimal string (bigint-safe). It is plain JSON: no bigint, no undefined.
 *
 * Two specs mean the same job exactly when their normalized forms are deep-equal.
 */

const nonNegInt = z.int().min(0);
const posInt = z.int().min(1);
/** Minor units of an asset as a decimal string, e.g. `"2500000"` for 2.50 USDC. */
export const MinorUnitsSchema = z.string().regex(/^(0|[1-9][0-9]*)$/);

export const LocationMatchSchema = z.strictObject({
  continent: z.enum(CONTINENTS).nullable(),
  /** ISO 3166-1 alpha-2, upper case. */
  country: z
    .string()
    .regex(/^[A-Z]{2}$/)
    .nullable(),
  city: z.string().nullable(),
  asn: posInt.nullable(),
  isp: z.string().nullable(),
});
export type LocationMatch = z.infer<typeof LocationMatchSchema>;

export const LocationSchema = z.strictObject({
  /** Empty: anywhere. Otherwise a host must match one entry (all of that entry's fields). */
  accept: z.array(LocationMatchSchema),
  reject: z.array(LocationMatchSchema),
});
export type Location = z.infer<typeof LocationSchema>;

export const ComputeCapabilitySchema = z.strictObject({ major: posInt, minor: z.int().min(0).max(9) });
export type ComputeCapability = z.infer<typeof ComputeCapabilitySchema>;

export const MinTflopsSchema = z.strictObject(
  Object.fromEntries(PRECISIONS.map((p) => [p, z.number().positive().nullable()])) as Record<
    (typeof PRECISIONS)[number],
    z.ZodNullable<z.ZodNumber>
  >,
);
export type MinTflops = z.infer<typeof MinTflopsSchema>;

export const GpuRequirementSchema = z.strictObject({
  /** Total GPUs of the allocation. */
  count: posInt,
  vendor: z.enum(GPU_VENDORS),
  /** Upper-cased, whitespace-collapsed, sorted, unique; empty = any model. */
  models: z.array(z.string()),
  /** 0 = no minimum. */
  minVramBytes: nonNegInt,
  /** NVIDIA candidates only. */
  minComputeCapability: ComputeCapabilitySchema.nullable(),
  /** AMD candidates only; sorted, unique; empty = any. */
  amdArchitectures: z.array(z.string()),
  /** Canonical semver range (`semver.validRange`) for NVIDIA candidates. */
  cuda: z.string().nullable(),
  /** Canonical semver range for AMD candidates. */
  rocm: z.string().nullable(),
  minTflops: MinTflopsSchema,
  mixedModels: z.boolean(),
});
export type GpuRequirement = z.infer<typeof GpuRequirementSchema>;

export const ResourcesSchema = z.strictObject({
  /** Per rank. */
  cpuMillicores: posInt,
  cpuArchitecture: z.enum(CPU_ARCHITECTURES).nullable(),
  /** Per rank. */
  ramBytes: posInt,
  /** Per rank; 0 = no scratch disk needed. */
  diskBytes: nonNegInt,
  /** For the whole allocation; null = CPU-only. */
  gpus: GpuRequirementSchema.nullable(),
});
export type Resources = z.infer<typeof ResourcesSchema>;

export const ExecutionSchema = z.strictObject({
  image: z.string().nullable(),
  cmd: z.array(z.string()),
  entrypoint: z.array(z.string()).nullable(),
  /** Keys sorted. */
  env: z.record(z.string(), z.string()),
  workingDir: z.string().nullable(),
});
export type Execution = z.infer<typeof ExecutionSchema>;

export const RangeSchema = z.strictObject({ min: posInt, max: posInt });
export type IntRange = z.infer<typeof RangeSchema>;

export const InterconnectSchema = z.strictObject({
  minBandwidthBps: posInt.nullable(),
  maxRttUs: posInt.nullable(),
  sameSite: z.boolean(),
});
export type Interconnect = z.infer<typeof InterconnectSchema>;

export const DistributedSchema = z.strictObject({
  framework: z.enum(FRAMEWORKS),
  /** 0 for a CPU-only gang. */
  gpusPerRank: nonNegInt,
  ranksPerNode: RangeSchema,
  /** `ranksPerNode × gpusPerRank`; null for a CPU-only gang. */
  gpusPerNode: RangeSchema.nullable(),
  maxNodes: posInt,
  placement: z.enum(PLACEMENTS),
  interconnect: InterconnectSchema,
  rendezvousPort: posInt,
});
export type Distributed = z.infer<typeof DistributedSchema>;

export const FailureRecoverySchema = z.strictObject({
  strategy: z.enum(RECOVERY_STRATEGIES),
  maxRestarts: nonNegInt,
  replaceFailedNode: z.boolean(),
  elastic: z.strictObject({ minNodes: posInt, maxNodes: posInt }).nullable(),
  checkpointEnv: z.string().nullable(),
  /** A rank silent (no output) this long is stopped by its edge as hung; null: never. */
  progressTimeoutMs: posInt.nullable().default(null),
});
export type FailureRecovery = z.infer<typeof FailureRecoverySchema>;

export const PortSchema = z.strictObject({
  private: posInt,
  public: posInt.nullable(),
  protocol: z.enum(['tcp', 'udp']),
});
export type Port = z.infer<typeof PortSchema>;

export const AllocationSchema = z.strictObject({
  name: z.string(),
  type: z.enum(ALLOCATION_TYPES),
  executor: z.enum(EXECUTORS),
  execution: ExecutionSchema,
  resources: ResourcesSchema,
  /** Processes (containers) the allocation runs: 1 unless distributed. */
  ranks: posInt,
  distributed: DistributedSchema.nullable(),
  failureRecovery: FailureRecoverySchema,
  /** Own limit, or the ensemble's. */
  maxDurationMs: posInt,
  dnsName: z.string(),
  /** Sorted by protocol, then private port. */
  ports: z.array(PortSchema),
  location: LocationSchema,
});
export type Allocation = z.infer<typeof AllocationSchema>;

export const NodeSchema = z.strictObject({
  name: z.string(),
  /** Sorted. */
  allocations: z.array(z.string()),
  peer: z.string().nullable(),
  location: LocationSchema,
});
export type EnsembleNode = z.infer<typeof NodeSchema>;

export const EdgeConstraintSchema = z.strictObject({
  /** Sorted pair of node or allocation names. */
  between: z.tuple([z.string(), z.string()]),
  maxRttUs: posInt.nullable(),
  minBandwidthBps: posInt.nullable(),
});
export type EdgeConstraint = z.infer<typeof EdgeConstraintSchema>;

export const BudgetSchema = z.strictObject({
  asset: z.string(),
  decimals: z.int().min(0).max(18),
  maxPricePerGpuHourMinor: MinorUnitsSchema,
  maxTotalMinor: MinorUnitsSchema.nullable(),
});
export type Budget = z.infer<typeof BudgetSchema>;

export const NormalizedSpecSchema = z.strictObject({
  apiVersion: z.literal('gpunet.io/v1'),
  kind: z.literal('Ensemble'),
  metadata: z.strictObject({
    name: z.string(),
    description: z.string().nullable(),
    /** Keys sorted. */
    labels: z.record(z.string(), z.string()),
  }),
  maxDurationMs: posInt,
  subnet: z.string().nullable(),
  budget: BudgetSchema.nullable(),
  /** Sorted by name. */
  allocations: z.array(AllocationSchema).min(1),
  /** Sorted by name. */
  nodes: z.array(NodeSchema),
  /** Sorted by pair. */
  edgeConstraints: z.array(EdgeConstraintSchema),
});
export type NormalizedSpec = z.infer<typeof NormalizedSpecSchema>;
