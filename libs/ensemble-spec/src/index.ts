export { parseEnsembleSpec, parseEnsembleSpecOrThrow, type ParseOptions, type ParseResult } from './parse';
export {
  EnsembleSpecError,
  formatSpecError,
  isEnsembleSpecError,
  SPEC_ERROR_CODES,
  type SpecError,
  type SpecErrorCode,
  type SpecWarning,
} from './errors';
export { DEFAULT_LIMITS, FIELD_LIMITS, type SpecLimits } from './limits';
export type { SpecFormat } from './source-document';
export {
  AllocationSchema,
  BudgetSchema,
  ComputeCapabilitySchema,
  DistributedSchema,
  EdgeConstraintSchema,
  ExecutionSchema,
  FailureRecoverySchema,
  GpuRequirementSchema,
  InterconnectSchema,
  LocationMatchSchema,
  LocationSchema,
  MinorUnitsSchema,
  MinTflopsSchema,
  NodeSchema,
  NormalizedSpecSchema,
  PortSchema,
  RangeSchema,
  ResourcesSchema,
  type Allocation,
  type Budget,
  type ComputeCapability,
  type Distributed,
  type EdgeConstraint,
  type EnsembleNode,
  type Execution,
  type FailureRecovery,
  type GpuRequirement,
  type Interconnect,
  type IntRange,
  type Location,
  type LocationMatch,
  type MinTflops,
  type NormalizedSpec,
  type Port,
  type Resources,
} from './normalized.schema';
export {
  API_VERSION,
  EnsembleSpecSourceSchema,
  FRAMEWORKS,
  GPU_VENDORS,
  KIND,
  PLACEMENTS,
  PRECISIONS,
  RECOVERY_STRATEGIES,
  specDocs,
  type EnsembleSpecInput,
  type EnsembleSpecSource,
  type Precision,
  type SpecDocMeta,
} from './source.schema';
export { ensembleSpecJsonSchema, JSON_SCHEMA_ID } from './json-schema';
export { serializeEnsembleSpec, toSourceSpec } from './serialize';
export {
  describeGpus,
  describePlacement,
  describeRange,
  explainAllocation,
  explainEnsembleSpec,
} from './explain';
export { escrowCeilingMinor, KNOWN_ASSET_DECIMALS, totalGpus } from './normalize';
export { minNodes } from './allocation';
export { isReservedEnv, RESERVED_ENV, RESERVED_ENV_PREFIXES } from './reserved-env';
export {
  formatBandwidth,
  formatDurationMs,
  formatDurationUs,
  formatMoney,
  formatSize,
  parseBandwidth,
  parseDurationMs,
  parseDurationUs,
  parseMoney,
  parseSize,
  type UnitResult,
} from './units';
