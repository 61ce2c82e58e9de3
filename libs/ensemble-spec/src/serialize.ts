import { stringify } from 'yaml';
import type { Allocation, Location, LocationMatch, NormalizedSpec } from './normalized.schema';
import type { EnsembleSpecInput } from './source.schema';
import { PRECISIONS } from './source.schema';
import { formatBandwidth, formatDurationMs, formatDurationUs, formatMoney, formatSize } from './units';

type Obj = Record<string, unknown>;

/** Drops `undefined` entries so the output holds only what was set. */
const compact = <T extends Obj>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const orUndefined = <T, R>(v: T | null, f: (v: T) => R): R | undefined => (v === null ? undefined : f(v));

const locationMatch = (m: LocationMatch): Obj =>
  compact({
    continent: m.continent ?? undefined,
    country: m.country ?? undefined,
    city: m.city ?? undefined,
    asn: m.asn ?? undefined,
    isp: m.isp ?? undefined,
  });

const location = (l: Location): Obj | undefined =>
  l.accept.length === 0 && l.reject.length === 0
    ? undefined
    : compact({
        accept: l.accept.length === 0 ? undefined : l.accept.map(locationMatch),
        reject: l.reject.length === 0 ? undefined : l.reject.map(locationMatch),
      });

const cores = (millicores: number): number => millicores / 1000;

const allocation = (a: Allocation, ensembleMs: number): Obj => {
  const g = a.resources.gpus;
  const d = a.distributed;
  const tflops =
    g === null
      ? {}
      : Object.fromEntries(PRECISIONS.filter((p) => g.minTflops[p] !== null).map((p) => [p, g.minTflops[p]]));
  const gpus =
    g === null
      ? undefined
      : compact({
          count: g.count,
          vendor: g.vendor,
          models: g.models.length === 0 ? undefined : g.models,
          min_vram: g.minVramBytes === 0 ? undefined : formatSize(g.minVramBytes),
          min_compute_capability: orUndefined(g.minComputeCapability, (cc) => `${cc.major}.${cc.minor}`),
          amd_architectures: g.amdArchitectures.length === 0 ? undefined : g.amdArchitectures,
          cuda: g.cuda ?? undefined,
          rocm: g.rocm ?? undefined,
          min_tflops: Object.keys(tflops).length === 0 ? undefined : tflops,
          mixed_models: g.mixedModels,
        });
  const distributed =
    d === null
      ? undefined
      : compact({
          framework: d.framework,
          ranks: g === null ? a.ranks : undefined,
          gpus_per_rank: g === null ? undefined : d.gpusPerRank,
          gpus_per_node: d.gpusPerNode ?? undefined,
          ranks_per_node: d.gpusPerNode === null ? d.ranksPerNode : undefined,
          max_nodes: d.maxNodes,
          placement: d.placement,
          interconnect: compact({
            min_bandwidth: orUndefined(d.interconnect.minBandwidthBps, formatBandwidth),
            max_rtt: orUndefined(d.interconnect.maxRttUs, formatDurationUs),
            same_site: d.interconnect.sameSite,
          }),
          rendezvous_port: d.rendezvousPort,
        });
  const fr = a.failureRecovery;
  return compact({
    type: a.type,
    executor: a.executor,
    execution: compact({
      image: a.execution.image ?? undefined,
      cmd: a.execution.cmd.length === 0 ? undefined : a.execution.cmd,
      entrypoint: a.execution.entrypoint ?? undefined,
      env: Object.keys(a.execution.env).length === 0 ? undefined : a.execution.env,
      working_dir: a.execution.workingDir ?? undefined,
    }),
    resources: compact({
      cpu: compact({
        cores: cores(a.resources.cpuMillicores),
        architecture: a.resources.cpuArchitecture ?? undefined,
      }),
      ram: { size: formatSize(a.resources.ramBytes) },
      disk: a.resources.diskBytes === 0 ? undefined : { size: formatSize(a.resources.diskBytes) },
      gpus,
    }),
    distributed,
    failure_recovery: compact({
      strategy: fr.strategy,
      max_restarts: fr.maxRestarts,
      replace_failed_node: fr.replaceFailedNode,
      elastic: orUndefined(fr.elastic, (e) => ({ min_nodes: e.minNodes, max_nodes: e.maxNodes })),
      checkpoint_env: fr.checkpointEnv ?? undefined,
      progress_timeout: fr.progressTimeoutMs === null ? undefined : formatDurationMs(fr.progressTimeoutMs),
    }),
    max_duration: a.maxDurationMs === ensembleMs ? undefined : formatDurationMs(a.maxDurationMs),
    dns_name: a.dnsName === a.name ? undefined : a.dnsName,
    ports:
      a.ports.length === 0
        ? undefined
        : a.ports.map((p) =>
            compact({ private: p.private, public: p.public ?? undefined, protocol: p.protocol }),
          ),
    location: location(a.location),
  });
};

/**
 * The canonical source document for a normalized spec: every default written out, units in their
 * largest exact form. Parsing it gives back the same normalized spec.
 */
export const toSourceSpec = (spec: NormalizedSpec): EnsembleSpecInput => {
  const doc = compact({
    apiVersion: spec.apiVersion,
    kind: spec.kind,
    metadata: compact({
      name: spec.metadata.name,
      description: spec.metadata.description ?? undefined,
      labels: Object.keys(spec.metadata.labels).length === 0 ? undefined : spec.metadata.labels,
    }),
    max_duration: formatDurationMs(spec.maxDurationMs),
    subnet: spec.subnet ?? undefined,
    budget: orUndefined(spec.budget, (b) =>
      compact({
        asset: b.asset,
        decimals: b.decimals,
        max_price_per_gpu_hour: formatMoney(BigInt(b.maxPricePerGpuHourMinor), b.decimals),
        max_total: orUndefined(b.maxTotalMinor, (t) => formatMoney(BigInt(t), b.decimals)),
      }),
    ),
    allocations: Object.fromEntries(spec.allocations.map((a) => [a.name, allocation(a, spec.maxDurationMs)])),
    nodes:
      spec.nodes.length === 0
        ? undefined
        : Object.fromEntries(
            spec.nodes.map((n) => [
              n.name,
              compact({
                allocations: n.allocations,
                peer: n.peer ?? undefined,
                location: location(n.location),
              }),
            ]),
          ),
    edge_constraints:
      spec.edgeConstraints.length === 0
        ? undefined
        : spec.edgeConstraints.map((e) =>
            compact({
              between: e.between,
              max_rtt: orUndefined(e.maxRttUs, formatDurationUs),
              min_bandwidth: orUndefined(e.minBandwidthBps, formatBandwidth),
            }),
          ),
  });
  return doc as EnsembleSpecInput;
};

/** The canonical source text of a normalized spec, as YAML (default) or JSON. */
export const serializeEnsembleSpec = (spec: NormalizedSpec, format: 'yaml' | 'json' = 'yaml'): string => {
  const doc = toSourceSpec(spec);
  return format === 'json'
    ? `${JSON.stringify(doc, null, 2)}\n`
    : stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false });
};
