/**
 * Limits that protect every service that parses specs (the gateway parses untrusted input). A caller
 * may pass stricter limits; the defaults are also the maxima the published JSON Schema states.
 */
export interface SpecLimits {
  /** Largest source document in bytes (UTF-8). Default 1 MiB. */
  readonly maxBytes: number;
  /** Deepest nesting of maps and lists. Default 32. */
  readonly maxDepth: number;
  /**
   * YAML alias budget passed to `yaml`'s `maxAliasCount`: how many nodes aliases may expand into.
   * Defeats "billion laughs" documents. Default 100.
   */
  readonly maxAliasCount: number;
  /** GPUs in one job, over all allocations. Default 4096. */
  readonly maxGpusPerJob: number;
  /** Allocations in one ensemble. Default 1024. */
  readonly maxAllocations: number;
  /** Named nodes in one ensemble. Default 1024. */
  readonly maxNodes: number;
  /** Edge constraints in one ensemble. Default 4096. */
  readonly maxEdgeConstraints: number;
  /** Errors reported before the parser stops collecting. Default 100. */
  readonly maxErrors: number;
}

export const DEFAULT_LIMITS: SpecLimits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 32,
  maxAliasCount: 100,
  maxGpusPerJob: 4096,
  maxAllocations: 1024,
  maxNodes: 1024,
  maxEdgeConstraints: 4096,
  maxErrors: 100,
});

/** Fixed bounds of single fields; part of the format (the JSON Schema publishes them). */
export const FIELD_LIMITS = Object.freeze({
  maxGpusPerAllocation: DEFAULT_LIMITS.maxGpusPerJob,
  maxNodesPerGang: 4096,
  maxRanks: 65_536,
  maxCores: 4096,
  maxVramBytes: 16 * 1024 ** 4,
  maxRamBytes: 256 * 1024 ** 4,
  maxDiskBytes: 10 ** 15,
  maxDurationMs: 366 * 24 * 3600 * 1000,
  maxRttUs: 60_000_000,
  maxBandwidthBps: 10 ** 15,
  maxTflops: 1_000_000,
  maxRestarts: 1000,
  minProgressTimeoutMs: 1000,
  maxEnvVars: 256,
  maxEnvValueLength: 32 * 1024,
  maxArgs: 1024,
  maxArgLength: 32 * 1024,
  maxPorts: 64,
  maxModels: 64,
  maxLocations: 256,
  maxLabels: 64,
  maxNameLength: 63,
  maxDecimals: 18,
  maxMoneyDigits: 40,
});
