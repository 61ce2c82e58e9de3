import type {
  AvailabilityWindow,
  CandidateGpu,
  CandidateProvider,
  FindCandidates,
  ProviderView,
  QueryResponse,
} from '@gpunet/contracts';
import {
  availableFor,
  type CandidateCriteria,
  type CandidateRequest,
  candidateCriteria,
  locationAllowed,
  versionsSatisfied,
} from './candidate.filter';

/** A GPU as the index holds it: what the reply carries plus what filters read. */
export interface IndexedGpu extends CandidateGpu {
  /** ` NVIDIA H100 80GB HBM3 `: words between spaces, for word-sequence model matching. */
  readonly modelWords: string;
  /** `major × 10 + minor`, or null. */
  readonly cc: number | null;
  readonly floor: bigint | null;
  /** Offered: provider online, shared, whole, unreserved (as projected). */
  readonly available: boolean;
}

/** A provider as the index holds it (one row of the projection with its GPUs). */
export interface IndexedProvider extends Omit<CandidateProvider, 'gpus'> {
  /** The aggregate's version the row reflects: an older read never replaces a newer one. */
  readonly version: number;
  readonly status: 'online' | 'offline' | 'deregistered';
  /** What the edge's `isolation` rests on (the provider view shows it; candidates carry the level). */
  readonly isolationDetail: string;
  readonly images: readonly string[];
  readonly availability: {
    readonly timeZone: string;
    readonly windows: readonly AvailabilityWindow[];
  } | null;
  readonly gpus: readonly IndexedGpu[];
}

/**
 * What a provider's GPUs could offer at best, so a query skips providers without looking at each
 * GPU. Flat fields on the entry itself: a query for a rare model reads this for every provider, and
 * each object it follows costs a cache miss (bench/discovery's 10,000 providers: 9.2 ms through the
 * provider and a summary object, 0.85 ms this way).
 */
interface ProviderSummary {
  readonly online: boolean;
  /** Bit per vendor (`VENDOR_BIT`) with an offered GPU. */
  readonly vendors: number;
  /** The offered GPUs' distinct model words, one array shared by every provider with the same. */
  readonly modelWords: readonly string[];
  readonly maxVramBytes: number;
  readonly offered: number;
}

const VENDOR_BIT: Readonly<Record<'nvidia' | 'amd', number>> = { nvidia: 1, amd: 2 };

const anyModelIn = (words: readonly string[], models: readonly string[]): boolean => {
  for (const w of words) for (const m of models) if (w.includes(m)) return true;
  return false;
};

/** Whether a provider might match, remembering per query whether each shared model-word list does. */
const mightMatch = (
  e: ProviderSummary,
  c: CandidateCriteria,
  models: Map<readonly string[], boolean>,
): boolean => {
  if (!e.online || e.offered < c.minGpusPerProvider || e.maxVramBytes < c.minVramBytes) return false;
  if (c.vendor !== null && (e.vendors & VENDOR_BIT[c.vendor]) === 0) return false;
  if (c.models.length === 0) return true;
  let match = models.get(e.modelWords);
  if (match === undefined) models.set(e.modelWords, (match = anyModelIn(e.modelWords, c.models)));
  return match;
};

/**
 * A provider in the index with what its GPUs could offer at best and its reply JSON, both computed
 * once per row: a page is copied together from these bytes instead of built as objects and
 * stringified (that cost ~3 ms a page and put ~1 MB a query on the heap, which V8 then collected
 * with mark-compacts of the whole index every few dozen queries: bench/discovery).
 */
interface Entry extends ProviderSummary {
  readonly id: string;
  readonly provider: IndexedProvider;
  /**
   * `JSON.stringify` of the provider as a candidate with all its GPUs, less the closing `]}`: a
   * provider whose GPUs all match is one copy.
   */
  readonly json: Uint8Array;
  /** Where each GPU's JSON ends in `json` (the first starts where `"gpus":[` ends, at `headBytes`; a comma follows each). */
  readonly gpuEnds: readonly number[];
  readonly headBytes: number;
}

const utf8 = new TextEncoder();

const entryOf = (provider: IndexedProvider, sharedWords: (words: string[]) => readonly string[]): Entry => {
  const head = JSON.stringify(candidateOf(provider, [])).slice(0, -2); // …,"gpus":[
  const gpus = provider.gpus.map((g) => JSON.stringify(toCandidateGpu(g)));
  const json = utf8.encode(head + gpus.join(','));
  const headBytes = utf8.encode(head).length;
  const gpuEnds: number[] = [];
  let end = headBytes - 1;
  for (const g of gpus) gpuEnds.push((end += 1 + utf8.encode(g).length));
  const offered = provider.gpus.filter((g) => g.available);
  return {
    id: provider.providerId,
    provider,
    online: provider.status === 'online',
    vendors: offered.reduce((bits, g) => bits | VENDOR_BIT[g.vendor], 0),
    modelWords: sharedWords([...new Set(offered.map((g) => g.modelWords))].sort()),
    maxVramBytes: offered.reduce((m, g) => Math.max(m, g.vramBytes), 0),
    offered: offered.length,
    json,
    gpuEnds,
    headBytes,
  };
};

/** A provider a page carries, with the positions (in `provider.gpus`) of its matching GPUs. */
interface Choice {
  readonly entry: Entry;
  readonly gpus: readonly number[];
}

/** What a page holds: the providers chosen, the bytes of their JSON (commas between) and where the next page starts. */
interface Selection {
  readonly picks: readonly Choice[];
  readonly itemBytes: number;
  readonly nextCursor: string | null;
}

/** Where GPU `k`'s JSON starts in the entry's `json`. */
const gpuStart = (e: Entry, k: number): number => (k === 0 ? e.headBytes : e.gpuEnds[k - 1]! + 1);
const gpuBytes = (e: Entry, k: number): number => e.gpuEnds[k]! - gpuStart(e, k);

/** The bytes of a choice's JSON: head, its GPUs with commas between, `]}`. */
const choiceBytes = (e: Entry, gpus: readonly number[]): number => {
  let n = e.headBytes + gpus.length - 1 + 2;
  for (const k of gpus) n += gpuBytes(e, k);
  return n;
};

const OPEN = utf8.encode('{"items":[');
const CURSOR = utf8.encode('],"nextCursor":');
const CLOSE = utf8.encode(']}');
const COMMA = 0x2c;
const BRACE = 0x7d;
/** What a reply holds besides its items: `{"items":[`, the cursor and the query's envelope, generously. */
const ENVELOPE_BYTES = 256;

const providerMeets = (p: IndexedProvider, c: CandidateCriteria): boolean =>
  p.cpuMillicores >= c.minCpuMillicores &&
  p.memoryBytes >= c.minMemoryBytes &&
  p.maxGpusPerJob >= c.minGpusPerProvider &&
  (c.cpuArchitecture === null || p.cpuArchitecture === c.cpuArchitecture) &&
  (c.subnet === null || p.subnets.includes(c.subnet)) &&
  (c.image === null || p.images.some((pre) => pre === '*' || c.image!.startsWith(pre))) &&
  (c.maxDurationMs === null || p.maxJobDurationMs === null || p.maxJobDurationMs >= c.maxDurationMs) &&
  (c.includeSimulated || !p.simulated) &&
  (c.asset === null || p.asset === c.asset) &&
  !c.excludeProviders.includes(p.providerId);

const gpuMatches = (g: IndexedGpu, c: CandidateCriteria, maxPrice: bigint | null): boolean =>
  g.available &&
  (c.vendor === null || g.vendor === c.vendor) &&
  g.vramBytes >= c.minVramBytes &&
  (c.models.length === 0 || c.models.some((m) => g.modelWords.includes(m))) &&
  (c.minComputeCapability === null ||
    g.vendor !== 'nvidia' ||
    (g.cc !== null && g.cc >= c.minComputeCapability)) &&
  (c.amdArchitectures.length === 0 ||
    g.vendor !== 'amd' ||
    (g.architecture !== null && c.amdArchitectures.includes(g.architecture))) &&
  (maxPrice === null || g.floor === null || g.floor <= maxPrice);

/** The first position in `entries` (sorted by id) whose id is greater than `after`. */
const upperBound = (entries: readonly Entry[], after: string): number => {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.id <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * The candidate set in memory, kept in provider-id order for keyset paging. The projection in
 * Postgres is the truth; the index mirrors it (loaded at start, refreshed per changed provider), so
 * a query touches only the providers it returns or skips — no database round trip. Pure.
 */
export class CandidateIndex {
  /** Every provider in id order: a query walks this array from its cursor. */
  private entries: Entry[] = [];
  private readonly byId = new Map<string, Entry>();
  /** Model-word lists by their text: providers with the same models share one list. */
  private modelWords = new Map<string, readonly string[]>();
  private readonly sharedWords = (words: string[]): readonly string[] => {
    const key = words.join('\n');
    let shared = this.modelWords.get(key);
    if (shared === undefined) this.modelWords.set(key, (shared = words));
    return shared;
  };

  get size(): number {
    return this.byId.size;
  }

  get(providerId: string): IndexedProvider | undefined {
    return this.byId.get(providerId)?.provider;
  }

  /** One provider with all its GPUs, offered or not; null when unknown or deregistered. */
  view(providerId: string): ProviderView | null {
    const p = this.get(providerId);
    if (p === undefined || p.status === 'deregistered') return null;
    const { gpus: _none, ...provider } = candidateOf(p, []);
    return {
      ...provider,
      status: p.status,
      isolationDetail: p.isolationDetail,
      gpus: p.gpus.map((g) => ({ ...toCandidateGpu(g), available: g.available })),
    };
  }

  /** Puts a provider's row in, unless the index already holds a newer version of it. */
  upsert(provider: IndexedProvider): boolean {
    const known = this.byId.get(provider.providerId);
    if (known && known.provider.version > provider.version) return false;
    const entry = entryOf(provider, this.sharedWords);
    const at = upperBound(this.entries, provider.providerId);
    if (known) this.entries[at - 1] = entry;
    else this.entries.splice(at, 0, entry);
    this.byId.set(provider.providerId, entry);
    return true;
  }

  /** Replaces everything (a full load or resync), keeping any newer row read meanwhile. */
  replaceAll(providers: readonly IndexedProvider[]): void {
    const next = new Map<string, Entry>();
    this.modelWords = new Map([...this.byId.values()].map((e) => [e.modelWords.join('\n'), e.modelWords]));
    for (const p of providers) {
      const known = this.byId.get(p.providerId);
      next.set(
        p.providerId,
        known && known.provider.version > p.version ? known : entryOf(p, this.sharedWords),
      );
    }
    this.byId.clear();
    for (const [id, e] of next) this.byId.set(id, e);
    this.entries = [...next.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * One page of candidates: online providers after `cursor` with free, shared GPUs meeting the
   * request, in provider-id order, at most `limit` providers and about `maxReplyBytes` of JSON.
   * `nextCursor` is null when no provider follows.
   */
  query(
    request: CandidateRequest,
    nowMs: number,
    maxReplyBytes: number,
  ): QueryResponse<typeof FindCandidates> {
    const { picks, nextCursor } = this.select(request, nowMs, maxReplyBytes);
    return {
      items: picks.map(({ entry, gpus }) =>
        candidateOf(
          entry.provider,
          gpus.map((k) => toCandidateGpu(entry.provider.gpus[k]!)),
        ),
      ),
      nextCursor,
    };
  }

  /**
   * The same page as `query`, as the UTF-8 bytes of its JSON (`JSON.stringify` of `query`'s answer,
   * byte for byte), copied together from each provider's JSON kept in the index into the buffer
   * `allocate` gives (of the length asked, not necessarily zeroed: every byte is written).
   */
  queryJson(
    request: CandidateRequest,
    nowMs: number,
    maxReplyBytes: number,
    allocate: (length: number) => Uint8Array = (length) => new Uint8Array(length),
  ): Uint8Array {
    const { picks, itemBytes, nextCursor } = this.select(request, nowMs, maxReplyBytes);
    const cursor = utf8.encode(JSON.stringify(nextCursor));
    const out = allocate(OPEN.length + itemBytes + CURSOR.length + cursor.length + 1);
    out.set(OPEN);
    let at = OPEN.length;
    for (let i = 0; i < picks.length; i++) {
      const { entry, gpus } = picks[i]!;
      if (i > 0) out[at++] = COMMA;
      // Runs of consecutive GPUs are one copy each (with their commas); the head joins a run from GPU 0.
      let from = 0;
      if (gpus[0] !== 0) {
        out.set(entry.json.subarray(0, entry.headBytes), at);
        at += entry.headBytes;
        from = gpuStart(entry, gpus[0]!);
      }
      for (let j = 0; j < gpus.length; j++) {
        if (j + 1 < gpus.length && gpus[j + 1] === gpus[j]! + 1) continue;
        const to = entry.gpuEnds[gpus[j]!]!;
        out.set(entry.json.subarray(from, to), at);
        at += to - from;
        if (j + 1 < gpus.length) {
          out[at++] = COMMA;
          from = gpuStart(entry, gpus[j + 1]!);
        }
      }
      out.set(CLOSE, at);
      at += CLOSE.length;
    }
    out.set(CURSOR, at);
    at += CURSOR.length;
    out.set(cursor, at);
    out[at + cursor.length] = BRACE;
    return out;
  }

  private select(request: CandidateRequest, nowMs: number, maxReplyBytes: number): Selection {
    const c = candidateCriteria(request);
    const maxPrice = c.maxPriceMinor === null ? null : BigInt(c.maxPriceMinor);
    const atMs = request.at === null ? nowMs : Date.parse(request.at);
    const picks: Choice[] = [];
    let itemBytes = 0;
    const entries = this.entries;
    const start = request.cursor === null ? 0 : upperBound(entries, request.cursor);
    const models = new Map<readonly string[], boolean>();
    for (let i = start; i < entries.length; i++) {
      const entry = entries[i]!;
      if (!mightMatch(entry, c, models) || !providerMeets(entry.provider, c)) continue;
      const p = entry.provider;
      const gpus: number[] = [];
      for (let k = 0; k < p.gpus.length; k++) {
        const g = p.gpus[k]!;
        if (gpuMatches(g, c, maxPrice) && versionsSatisfied(g, request.gpu.cuda, request.gpu.rocm))
          gpus.push(k);
      }
      if (gpus.length === 0 || Math.min(gpus.length, p.maxGpusPerJob) < c.minGpusPerProvider) continue;
      if (!locationAllowed(request.location, p.location)) continue;
      if (!availableFor(p.availability, atMs, request.maxDurationMs)) continue;
      const size = choiceBytes(entry, gpus) + (picks.length > 0 ? 1 : 0);
      if (ENVELOPE_BYTES + itemBytes + size > maxReplyBytes && picks.length > 0)
        return { picks, itemBytes, nextCursor: entries[i - 1]!.id };
      itemBytes += size;
      picks.push({ entry, gpus });
      if (picks.length === request.limit)
        return {
          picks,
          itemBytes,
          nextCursor: i + 1 < entries.length ? p.providerId : null,
        };
    }
    return { picks, itemBytes, nextCursor: null };
  }
}

/** A provider as a candidate (the reply's field order) with these GPUs. */
const candidateOf = (p: IndexedProvider, gpus: CandidateGpu[]): CandidateProvider => ({
  providerId: p.providerId,
  name: p.name,
  simulated: p.simulated,
  isolation: p.isolation,
  cpuArchitecture: p.cpuArchitecture,
  cpuMillicores: p.cpuMillicores,
  memoryBytes: p.memoryBytes,
  location: p.location,
  subnets: p.subnets,
  maxGpusPerJob: p.maxGpusPerJob,
  maxJobDurationMs: p.maxJobDurationMs,
  asset: p.asset,
  gpus,
});

const toCandidateGpu = (g: IndexedGpu): CandidateGpu => ({
  uuid: g.uuid,
  index: g.index,
  vendor: g.vendor,
  model: g.model,
  vramBytes: g.vramBytes,
  computeCapability: g.computeCapability,
  cudaVersion: g.cudaVersion,
  rocmVersion: g.rocmVersion,
  architecture: g.architecture,
  pciBusId: g.pciBusId,
  priceFloorMinor: g.priceFloorMinor,
  directPeers: g.directPeers,
});
