import { coerce } from 'semver';
import { InvalidSnapshotError } from '../model/errors';
import { MAX_GPUS_PER_HOST } from '../model/request';
import type {
  ClusterSnapshotInput,
  ComputeCapability,
  GpuVendor,
  GpuVerification,
  IntraHostLink,
  LinkInput,
  NetworkCoordinate,
  ProviderLocation,
  ProviderPolicy,
} from '../model/snapshot-input';
import type { Precision } from '../model/precision';

export interface CompiledGpu {
  readonly index: number;
  readonly hostIndex: number;
  /** Position in its host: bit `1 << local` of the host's masks. */
  readonly local: number;
  readonly uuid: string;
  readonly model: string;
  readonly vendor: GpuVendor;
  readonly vramBytes: number;
  readonly computeCapability: ComputeCapability | null;
  readonly amdArch: string | null;
  readonly driverVersion: string | null;
  /** Normalized to `x.y.z` (semver), or null. */
  readonly cudaVersion: string | null;
  readonly rocmVersion: string | null;
  readonly tflops: Readonly<Partial<Record<Precision, number>>>;
  readonly tflopsMeasured: boolean;
  /** When `tflops` were measured (ISO 8601); null for reference figures or when unknown. */
  readonly tflopsMeasuredAt: string | null;
  readonly simulated: boolean;
  /** null: nothing reported. */
  readonly verification: GpuVerification | null;
  readonly verificationNote: string | null;
}

export interface CompiledHost {
  readonly index: number;
  readonly id: string;
  readonly providerIndex: number;
  readonly siteIndex: number;
  /** Global index of the host's first GPU; its GPUs are contiguous. */
  readonly gpuStart: number;
  readonly gpuCount: number;
  readonly intraHost: IntraHostLink;
  readonly nicBandwidthBps: number;
  /** The host's own coordinate, else its site's, else null. */
  readonly coordinates: NetworkCoordinate | null;
  /** Whether `coordinates` is the host's own (else its site's): links to it may differ from its site's. */
  readonly ownCoordinates: boolean;
  /** The own coordinate's relative error (0 … 1); null when unknown or not its own. */
  readonly coordinatesError: number | null;
}

export interface CompiledProvider {
  readonly index: number;
  readonly id: string;
  readonly location: ProviderLocation;
  readonly policy: ProviderPolicy;
  readonly hostIndices: readonly number[];
}

export interface CompiledSite {
  readonly index: number;
  readonly id: string;
  readonly lanBandwidthBps: number;
  readonly lanRttUs: number;
  readonly coordinates: NetworkCoordinate | null;
  readonly hostIndices: readonly number[];
}

export interface MeasuredLink {
  readonly bandwidthBps: number;
  readonly rttUs: number;
  /** False: only the RTT was measured, the bandwidth is an estimate. */
  readonly bandwidthMeasured: boolean;
}

/** A measured link as the snapshot keeps it: the figures and where they came from. */
export interface StoredLink extends MeasuredLink {
  /** When it was measured (ISO 8601); null when unknown. */
  readonly measuredAt: string | null;
  /** The figures are a relay path's. */
  readonly relayed: boolean;
}

/**
 * The static part of a snapshot: what GPUs exist and where. Shared, unchanged, by every snapshot
 * `applyPlacement`/`releasePlacement` derive, so per-request work that depends only on it (filter
 * results) is memoized here.
 */
export interface Inventory {
  readonly gpus: readonly CompiledGpu[];
  readonly hosts: readonly CompiledHost[];
  readonly providers: readonly CompiledProvider[];
  readonly sites: readonly CompiledSite[];
  readonly gpuByUuid: ReadonlyMap<string, number>;
  readonly hostById: ReadonlyMap<string, number>;
  readonly providerById: ReadonlyMap<string, number>;
  readonly siteById: ReadonlyMap<string, number>;
  /** Keyed by `min(a, b) * hosts.length + max(a, b)` of host indices. */
  readonly hostLinks: ReadonlyMap<number, StoredLink>;
  /** Keyed by `min(a, b) * sites.length + max(a, b)` of site indices. */
  readonly siteLinks: ReadonlyMap<number, StoredLink>;
  readonly defaultWanBandwidthBps: number;
  readonly defaultWanRttUs: number;
  /** `NetworkInput.estimatesMeetBounds` (default true). */
  readonly estimatesMeetBounds: boolean;
  /**
   * A bounded memo of pure functions of (inventory, key): the same inputs give the same value, so
   * it changes no result, only how fast it comes. Not part of the snapshot's meaning.
   */
  readonly memo: Map<string, unknown>;
}

/**
 * An immutable cluster state: the inventory plus which GPUs are free. Derive new states with
 * `applyPlacement` and `releasePlacement`; never write to the arrays.
 */
export interface ClusterSnapshot {
  readonly inventory: Inventory;
  /** Per host: bit `local` set when that GPU is free. Treat as read-only. */
  readonly freeMask: Uint32Array;
  /** Per host: the placement id holding each GPU (null = free), or null when the whole host is free. */
  readonly owners: readonly (readonly (string | null)[] | null)[];
  /** Counts derivations from the original snapshot. */
  readonly version: number;
}

const pairKey = (a: number, b: number, n: number): number => (a < b ? a * n + b : b * n + a);
export const hostPairKey = (inv: Inventory, a: number, b: number): number => pairKey(a, b, inv.hosts.length);
export const sitePairKey = (inv: Inventory, a: number, b: number): number => pairKey(a, b, inv.sites.length);

const version = (v: string | null): string | null => (v === null ? null : (coerce(v)?.version ?? null));

const positive = (n: number, what: string): number => {
  if (!(Number.isFinite(n) && n > 0)) throw new InvalidSnapshotError(`${what} must be a positive number`);
  return n;
};

/**
 * Adds measured links to `into` (a later link of a pair replaces an earlier one), keyed by
 * `pairKey` over `byId`'s indices; throws `InvalidSnapshotError` naming the link and the field.
 */
export const compileLinks = (
  into: Map<number, StoredLink>,
  links: readonly LinkInput[],
  byId: ReadonlyMap<string, number>,
  count: number,
  kind: 'host' | 'site',
): void => {
  for (const l of links) {
    const a = byId.get(l.a);
    const b = byId.get(l.b);
    if (a === undefined || b === undefined) {
      throw new InvalidSnapshotError(`${kind} link ${l.a}–${l.b} names an unknown ${kind}`);
    }
    positive(l.bandwidthBps, `${kind} link ${l.a}–${l.b} bandwidthBps`);
    if (!(Number.isFinite(l.rttUs) && l.rttUs >= 0)) {
      throw new InvalidSnapshotError(`${kind} link ${l.a}–${l.b} rttUs must be a number ≥ 0`);
    }
    into.set(pairKey(a, b, count), {
      bandwidthBps: l.bandwidthBps,
      rttUs: l.rttUs,
      bandwidthMeasured: l.bandwidthMeasured ?? true,
      measuredAt: l.measuredAt ?? null,
      relayed: l.relayed ?? false,
    });
  }
};

/** Compiles plain snapshot data; throws `InvalidSnapshotError` on malformed input. */
export const createSnapshot = (input: ClusterSnapshotInput): ClusterSnapshot => {
  const siteById = new Map<string, number>();
  const siteHosts: number[][] = [];
  input.network.sites.forEach((s, i) => {
    if (siteById.has(s.id)) throw new InvalidSnapshotError(`site ${s.id} is declared twice`);
    positive(s.lanBandwidthBps, `site ${s.id} lanBandwidthBps`);
    siteById.set(s.id, i);
    siteHosts.push([]);
  });
  const gpus: CompiledGpu[] = [];
  const hosts: CompiledHost[] = [];
  const providers: CompiledProvider[] = [];
  const gpuByUuid = new Map<string, number>();
  const hostById = new Map<string, number>();
  const providerById = new Map<string, number>();
  const freeMasks: number[] = [];
  const owners: ((string | null)[] | null)[] = [];

  for (const p of input.providers) {
    if (providerById.has(p.id)) throw new InvalidSnapshotError(`provider ${p.id} is declared twice`);
    const providerIndex = providers.length;
    providerById.set(p.id, providerIndex);
    const hostIndices: number[] = [];
    for (const h of p.hosts) {
      if (hostById.has(h.id)) throw new InvalidSnapshotError(`host ${h.id} is declared twice`);
      const siteIndex = siteById.get(h.siteId);
      if (siteIndex === undefined)
        throw new InvalidSnapshotError(`host ${h.id} names unknown site ${h.siteId}`);
      if (h.gpus.length > MAX_GPUS_PER_HOST) {
        throw new InvalidSnapshotError(
          `host ${h.id} has ${h.gpus.length} GPUs; at most ${MAX_GPUS_PER_HOST}`,
        );
      }
      positive(h.nicBandwidthBps, `host ${h.id} nicBandwidthBps`);
      positive(h.intraHost.bandwidthBps, `host ${h.id} intraHost.bandwidthBps`);
      const hostIndex = hosts.length;
      hostById.set(h.id, hostIndex);
      hostIndices.push(hostIndex);
      siteHosts[siteIndex]!.push(hostIndex);
      let free = 0;
      let anyReserved = false;
      const hostOwners: (string | null)[] = [];
      h.gpus.forEach((g, local) => {
        if (gpuByUuid.has(g.uuid)) throw new InvalidSnapshotError(`GPU ${g.uuid} is declared twice`);
        gpuByUuid.set(g.uuid, gpus.length);
        gpus.push({
          index: gpus.length,
          hostIndex,
          local,
          uuid: g.uuid,
          model: g.model.toUpperCase(),
          vendor: g.vendor,
          vramBytes: g.vramBytes,
          computeCapability: g.computeCapability,
          amdArch: g.amdArch,
          driverVersion: g.driverVersion,
          cudaVersion: version(g.cudaVersion),
          rocmVersion: version(g.rocmVersion),
          tflops: g.tflops,
          tflopsMeasured: g.tflopsMeasured,
          tflopsMeasuredAt: g.tflopsMeasured ? (g.tflopsMeasuredAt ?? null) : null,
          simulated: g.simulated === true || g.verification === 'simulated',
          verification: g.verification ?? null,
          verificationNote: g.verificationNote ?? null,
        });
        if (g.reservedBy === null) free |= 1 << local;
        else anyReserved = true;
        hostOwners.push(g.reservedBy);
      });
      const site = input.network.sites[siteIndex]!;
      hosts.push({
        index: hostIndex,
        id: h.id,
        providerIndex,
        siteIndex,
        gpuStart: gpus.length - h.gpus.length,
        gpuCount: h.gpus.length,
        intraHost: h.intraHost,
        nicBandwidthBps: h.nicBandwidthBps,
        coordinates: h.coordinates ?? site.coordinates,
        ownCoordinates: h.coordinates !== null,
        coordinatesError: h.coordinates === null ? null : (h.coordinatesError ?? null),
      });
      freeMasks.push(free >>> 0);
      owners.push(anyReserved ? hostOwners : null);
    }
    providers.push({ index: providerIndex, id: p.id, location: p.location, policy: p.policy, hostIndices });
  }

  const sites: CompiledSite[] = input.network.sites.map((s, i) => ({
    index: i,
    id: s.id,
    lanBandwidthBps: s.lanBandwidthBps,
    lanRttUs: s.lanRttUs,
    coordinates: s.coordinates,
    hostIndices: siteHosts[i]!,
  }));

  const hostLinks = new Map<number, StoredLink>();
  compileLinks(hostLinks, input.network.hostLinks, hostById, hosts.length, 'host');
  const siteLinks = new Map<number, StoredLink>();
  compileLinks(siteLinks, input.network.siteLinks, siteById, sites.length, 'site');

  return {
    inventory: {
      gpus,
      hosts,
      providers,
      sites,
      gpuByUuid,
      hostById,
      providerById,
      siteById,
      hostLinks,
      siteLinks,
      defaultWanBandwidthBps: positive(input.network.defaultWanBandwidthBps, 'defaultWanBandwidthBps'),
      defaultWanRttUs: input.network.defaultWanRttUs,
      estimatesMeetBounds: input.network.estimatesMeetBounds ?? true,
      memo: new Map(),
    },
    freeMask: Uint32Array.from(freeMasks),
    owners,
    version: 0,
  };
};

/** Number of set bits of a 32-bit mask. */
export const popcount = (x: number): number => {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
};

/** Free GPUs in the whole snapshot. */
export const freeGpuCount = (s: ClusterSnapshot): number => {
  let n = 0;
  for (let h = 0; h < s.freeMask.length; h++) n += popcount(s.freeMask[h]!);
  return n;
};

/** The placement holding a GPU, null when free, undefined when the uuid is unknown. */
export const gpuOwner = (s: ClusterSnapshot, uuid: string): string | null | undefined => {
  const g = s.inventory.gpuByUuid.get(uuid);
  if (g === undefined) return undefined;
  const gpu = s.inventory.gpus[g]!;
  return s.owners[gpu.hostIndex]?.[gpu.local] ?? null;
};

/** How many memoized values an inventory keeps (least recently used go first). */
export const MEMO_CAPACITY = 64;

/** A value memoized on the inventory under `key`: `compute` must be a pure function of (inventory, key). */
export const memoized = <T>(inv: Inventory, key: string, compute: () => T): T => {
  const memo = inv.memo;
  if (memo.has(key)) {
    const hit = memo.get(key) as T;
    memo.delete(key);
    memo.set(key, hit);
    return hit;
  }
  const value = compute();
  memo.set(key, value);
  if (memo.size > MEMO_CAPACITY) memo.delete(memo.keys().next().value!);
  return value;
};
