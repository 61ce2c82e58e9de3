import {
  availableUntil,
  type AvailabilityWindow,
  modelWords,
  type QueryRequest,
  type FindCandidates,
} from '@gpunet/contracts';
import type { Location, LocationMatch } from '@gpunet/ensemble-spec';
import semver from 'semver';

export type CandidateRequest = Required<QueryRequest<typeof FindCandidates>>;

/** The part of a candidate request the database filters on. */
export interface CandidateCriteria {
  readonly vendor: 'nvidia' | 'amd' | null;
  /** Model word sequences (` H100 `); empty: any model. */
  readonly models: readonly string[];
  readonly minVramBytes: number;
  /** `major × 10 + minor` for NVIDIA GPUs; null: none. */
  readonly minComputeCapability: number | null;
  readonly amdArchitectures: readonly string[];
  readonly minGpusPerProvider: number;
  readonly minCpuMillicores: number;
  readonly minMemoryBytes: number;
  readonly cpuArchitecture: string | null;
  readonly subnet: string | null;
  readonly image: string | null;
  readonly maxDurationMs: number | null;
  readonly asset: string | null;
  readonly maxPriceMinor: string | null;
  readonly includeSimulated: boolean;
  readonly excludeProviders: readonly string[];
}

export const candidateCriteria = (r: CandidateRequest): CandidateCriteria => ({
  vendor: r.gpu.vendor === 'any' ? null : r.gpu.vendor,
  models: r.gpu.models.map((m) => ` ${modelWords(m)} `).filter((m) => m.trim() !== ''),
  minVramBytes: r.gpu.minVramBytes,
  minComputeCapability: r.gpu.minComputeCapability
    ? r.gpu.minComputeCapability.major * 10 + r.gpu.minComputeCapability.minor
    : null,
  amdArchitectures: r.gpu.amdArchitectures.map((a) => a.toLowerCase()),
  minGpusPerProvider: r.minGpusPerProvider,
  minCpuMillicores: r.minCpuMillicores,
  minMemoryBytes: r.minMemoryBytes,
  cpuArchitecture: r.cpuArchitecture,
  subnet: r.subnet,
  image: r.image,
  maxDurationMs: r.maxDurationMs,
  asset: r.maxPrice?.asset ?? null,
  maxPriceMinor: r.maxPrice?.perGpuHourMinor ?? null,
  includeSimulated: r.includeSimulated,
  excludeProviders: r.excludeProviders,
});

const versionCache = new Map<string, semver.SemVer | null>();
const asVersion = (text: string): semver.SemVer | null => {
  let v = versionCache.get(text);
  if (v === undefined) {
    v = semver.coerce(text);
    if (versionCache.size < 10_000) versionCache.set(text, v);
  }
  return v;
};

/**
 * Whether a GPU's driver stack satisfies the spec's ranges: `cuda` applies to NVIDIA GPUs, `rocm` to
 * AMD ones. An unknown version does not satisfy a range.
 */
export const versionsSatisfied = (
  gpu: {
    readonly vendor: 'nvidia' | 'amd';
    readonly cudaVersion: string | null;
    readonly rocmVersion: string | null;
  },
  cuda: string | null,
  rocm: string | null,
): boolean => {
  const range = gpu.vendor === 'nvidia' ? cuda : rocm;
  if (range === null) return true;
  const text = gpu.vendor === 'nvidia' ? gpu.cudaVersion : gpu.rocmVersion;
  const version = text === null ? null : asVersion(text);
  return version !== null && rangeOf(range)?.test(version) === true;
};

// Parsing a range costs more than testing it: a page tests thousands of GPUs against one range.
const ranges = new Map<string, semver.Range | null>();
const rangeOf = (text: string): semver.Range | null => {
  let range = ranges.get(text);
  if (range === undefined) {
    try {
      range = new semver.Range(text);
    } catch {
      range = null;
    }
    if (ranges.size < 1_000) ranges.set(text, range);
  }
  return range;
};

/** Whether the provider accepts a job starting at `atMs` and running `durationMs` (or any job when null). */
export const availableFor = (
  availability: { readonly timeZone: string; readonly windows: readonly AvailabilityWindow[] } | null,
  atMs: number,
  durationMs: number | null,
): boolean => {
  const until = availableUntil(availability, atMs);
  if (until === null) return false;
  return until === 'always' || durationMs === null || atMs + durationMs <= until;
};

interface ProviderLocation {
  readonly continent: string | null;
  readonly country: string | null;
  readonly city: string | null;
}

const matches = (entry: LocationMatch, at: ProviderLocation): boolean =>
  (entry.continent === null || entry.continent === at.continent) &&
  (entry.country === null || entry.country === at.country) &&
  (entry.city === null || (at.city !== null && entry.city.toLowerCase() === at.city.toLowerCase())) &&
  // Discovery does not know a provider's network operator: such an entry never matches.
  entry.asn === null &&
  entry.isp === null;

/** The spec's location rule: some `accept` entry matches (or there are none), no `reject` entry does. */
export const locationAllowed = (location: Location | null, at: ProviderLocation): boolean =>
  location === null ||
  ((location.accept.length === 0 || location.accept.some((e) => matches(e, at))) &&
    !location.reject.some((e) => matches(e, at)));
