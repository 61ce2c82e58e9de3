import type { GangRequest } from '../model/request';
import { pluginError, type Status } from '../model/status';
import { type Inventory, memoized } from '../snapshot/cluster-snapshot';
import type { RequestContext } from './context';
import type { GpuPredicate, HostPredicate, PluginRegistry } from './plugin';

/** What the filters decided for one request shape, over the whole inventory (free or not). */
export interface Eligibility {
  /** Per host: bit `local` set when that GPU passes every filter. */
  readonly mask: Uint32Array;
  /** Hosts with at least one eligible GPU, in snapshot order. */
  readonly hosts: Int32Array;
  /** The same hosts grouped by site (sites in index order). */
  readonly sites: readonly { readonly site: number; readonly hosts: Int32Array }[];
  /** Per GPU: 0 when eligible, else 1 + the index in `registry.filters` of the first filter that rejected it. */
  readonly rejectedBy: Uint8Array;
  /** Per filter: one status it rejected with (for explanations), or null. */
  readonly samples: readonly (Status | null)[];
  /** Per GPU: the status it was rejected with (undefined when eligible), so explanations can count distinct reasons. */
  readonly rejectedWith: readonly (Status | undefined)[];
  /** Set when a filter threw: the framework reports it as `Error`. */
  readonly error: Status | null;
}

const registryIds = new WeakMap<PluginRegistry, number>();
let nextRegistryId = 0;
/** A number per registry object, for memo keys. */
export const registryId = (r: PluginRegistry): number => {
  let id = registryIds.get(r);
  if (id === undefined) {
    id = nextRegistryId++;
    registryIds.set(r, id);
  }
  return id;
};

/**
 * The request fields filters may read. Filters are memoized on these (plus the registry), so a
 * filter must not depend on any other field.
 */
export const filterKey = (r: GangRequest): string =>
  JSON.stringify([
    r.vendor,
    r.models,
    r.minVramBytes,
    r.minComputeCapability,
    r.amdArchitectures,
    r.cudaRange,
    r.rocmRange,
    r.minTflops,
    r.maxPricePerGpuHourMinor,
    r.subnet,
    r.location,
    r.pinnedProvider,
    r.trust,
    r.gpusPerRank,
    r.gpusPerNode?.min ?? null,
  ]);

/** Runs every filter over the inventory once per request shape; memoized on the inventory. */
export const eligibility = (ctx: RequestContext, registry: PluginRegistry): Eligibility =>
  memoized(ctx.inventory, `eligibility:${registryId(registry)}:${filterKey(ctx.request)}`, () =>
    computeEligibility(ctx, registry),
  );

const computeEligibility = (ctx: RequestContext, registry: PluginRegistry): Eligibility => {
  const inv: Inventory = ctx.inventory;
  const mask = new Uint32Array(inv.hosts.length);
  const rejectedBy = new Uint8Array(inv.gpus.length);
  const samples: (Status | null)[] = registry.filters.map(() => null);
  const rejectedWith: (Status | undefined)[] = new Array<Status | undefined>(inv.gpus.length);
  const hosts: number[] = [];
  let current = -1;
  try {
    const hostPredicates: [number, HostPredicate][] = [];
    const gpuPredicates: [number, GpuPredicate][] = [];
    registry.filters.forEach((f, i) => {
      current = i;
      const hp = f.hostFilter?.(ctx) ?? null;
      if (hp !== null) hostPredicates.push([i, hp]);
      const gp = f.gpuFilter?.(ctx) ?? null;
      if (gp !== null) gpuPredicates.push([i, gp]);
    });
    for (const provider of inv.providers) {
      for (const h of provider.hostIndices) {
        const host = inv.hosts[h]!;
        let rejected = 0;
        let status: Status | undefined;
        for (const [i, p] of hostPredicates) {
          current = i;
          const st = p(host, provider);
          if (st.code !== 'Success') {
            samples[i] ??= st;
            rejected = i + 1;
            status = st;
            break;
          }
        }
        if (rejected !== 0) {
          rejectedBy.fill(rejected, host.gpuStart, host.gpuStart + host.gpuCount);
          rejectedWith.fill(status, host.gpuStart, host.gpuStart + host.gpuCount);
          continue;
        }
        let bits = 0;
        for (let g = host.gpuStart; g < host.gpuStart + host.gpuCount; g++) {
          const gpu = inv.gpus[g]!;
          let by = 0;
          for (const [i, p] of gpuPredicates) {
            current = i;
            const st = p(gpu, host, provider);
            if (st.code !== 'Success') {
              samples[i] ??= st;
              rejectedWith[g] = st;
              by = i + 1;
              break;
            }
          }
          rejectedBy[g] = by;
          if (by === 0) bits |= 1 << gpu.local;
        }
        mask[h] = bits >>> 0;
        if (bits !== 0) hosts.push(h);
      }
    }
  } catch (e) {
    const name = registry.filters[current]?.name ?? 'filter';
    return {
      mask: new Uint32Array(inv.hosts.length),
      hosts: new Int32Array(0),
      sites: [],
      rejectedBy,
      samples,
      rejectedWith,
      error: pluginError(
        name,
        'PluginFailed',
        `filter ${name} threw: ${e instanceof Error ? e.message : String(e)}`,
      ),
    };
  }
  const bySite = new Map<number, number[]>();
  for (const h of hosts) {
    const s = inv.hosts[h]!.siteIndex;
    const list = bySite.get(s);
    if (list === undefined) bySite.set(s, [h]);
    else list.push(h);
  }
  const sites = [...bySite.entries()]
    .sort(([a], [b]) => a - b)
    .map(([site, list]) => ({ site, hosts: Int32Array.from(list) }));
  return { mask, hosts: Int32Array.from(hosts), sites, rejectedBy, samples, rejectedWith, error: null };
};
