import { minNodes, normalizeAllocation } from './allocation';
import type { Collector } from './collector';
import { FIELD_LIMITS, type SpecLimits } from './limits';
import { normalizeLocation } from './location';
import type { Allocation, Budget, EdgeConstraint, EnsembleNode, NormalizedSpec } from './normalized.schema';
import { type EnsembleSpecSource } from './source.schema';
import { closest } from './suggest';
import { formatMoney, parseBandwidth, parseDurationMs, parseDurationUs, parseMoney } from './units';

/**
 * Minor-unit precision of well-known assets, so that most specs need not state `decimals`.
 * Settlement remains the authority on assets; a spec that states decimals must agree with this table.
 */
export const KNOWN_ASSET_DECIMALS: Readonly<Record<string, number>> = {
  USD: 2,
  EUR: 2,
  USDC: 6,
  USDT: 6,
  ADA: 6,
  NTX: 6,
  DAI: 18,
  ETH: 18,
};

const byName = <T extends { name: string }>(a: T, b: T): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

const normalizeBudget = (src: EnsembleSpecSource['budget'], c: Collector): Budget | null | undefined => {
  if (src === undefined) return null;
  const before = c.errors.length;
  const known = KNOWN_ASSET_DECIMALS[src.asset];
  let decimals = src.decimals ?? known;
  if (decimals === undefined) {
    c.error(
      ['budget', 'decimals'],
      'MISSING_FIELD',
      `state the decimals of ${src.asset} (e.g. decimals: 6); it is not a well-known asset`,
    );
    decimals = 0;
  } else if (known !== undefined && src.decimals !== undefined && src.decimals !== known) {
    c.error(['budget', 'decimals'], 'CONFLICT', `${src.asset} has ${known} decimals, not ${src.decimals}`);
  }
  const money = (v: string | number, field: string): bigint | undefined => {
    const r = parseMoney(String(v), decimals);
    if (!r.ok) c.error(['budget', field], 'INVALID_VALUE', r.reason);
    return r.ok ? r.value : undefined;
  };
  const price = money(src.max_price_per_gpu_hour, 'max_price_per_gpu_hour');
  const total = src.max_total === undefined ? null : money(src.max_total, 'max_total');
  if (c.errors.length > before || price === undefined || total === undefined) return undefined;
  return {
    asset: src.asset,
    decimals,
    maxPricePerGpuHourMinor: price.toString(),
    maxTotalMinor: total === null ? null : total.toString(),
  };
};

/** Price × GPUs × duration for one allocation, rounded up to a whole minor unit. */
const allocationCeiling = (a: Allocation, pricePerGpuHour: bigint): bigint => {
  const gpus = BigInt(a.resources.gpus?.count ?? 0);
  const numerator = gpus * pricePerGpuHour * BigInt(a.maxDurationMs);
  return (numerator + 3_599_999n) / 3_600_000n;
};

/**
 * The most the job can cost, in minor units of its budget asset: Σ GPUs × max price per GPU-hour ×
 * max duration over allocations, capped by `max_total`. This is what settlement holds in escrow.
 * `null` without a budget.
 */
export const escrowCeilingMinor = (spec: NormalizedSpec): bigint | null => {
  if (spec.budget === null) return null;
  const price = BigInt(spec.budget.maxPricePerGpuHourMinor);
  const sum = spec.allocations.reduce((acc, a) => acc + allocationCeiling(a, price), 0n);
  const cap = spec.budget.maxTotalMinor === null ? null : BigInt(spec.budget.maxTotalMinor);
  return cap !== null && cap < sum ? cap : sum;
};

/** Total GPUs of a job. */
export const totalGpus = (spec: Pick<NormalizedSpec, 'allocations'>): number =>
  spec.allocations.reduce((n, a) => n + (a.resources.gpus?.count ?? 0), 0);

/**
 * Names in `nodes` and `edge_constraints` that refer to nothing. Runs on its own too, when other
 * parts of the document failed the schema, so a misspelt name is reported with everything else.
 */
export const checkReferences = (
  allocationNames: readonly string[],
  nodes: Readonly<Record<string, { readonly allocations: readonly string[] }>> | undefined,
  edges: readonly { readonly between: readonly string[] }[] | undefined,
  c: Collector,
): void => {
  const allocations = new Set(allocationNames);
  for (const [nodeName, n] of Object.entries(nodes ?? {})) {
    n.allocations.forEach((allocName, i) => {
      if (allocations.has(allocName)) return;
      const near = closest(allocName, allocationNames);
      c.error(
        ['nodes', nodeName, 'allocations', i],
        'UNKNOWN_REFERENCE',
        `no allocation '${allocName}'${near ? ` — did you mean '${near}'?` : ''}`,
      );
    });
  }
  const endpoints = [...allocationNames, ...Object.keys(nodes ?? {})];
  (edges ?? []).forEach((e, i) => {
    e.between.forEach((end, j) => {
      if (endpoints.includes(end)) return;
      const near = closest(end, endpoints);
      c.error(
        ['edge_constraints', i, 'between', j],
        'UNKNOWN_REFERENCE',
        `no node or allocation '${end}'${near ? ` — did you mean '${near}'?` : ''}`,
      );
    });
  });
};

/**
 * The normalized form of a spec that passed the source schema, checking every rule that spans fields
 * or allocations. Returns `undefined` when any error was recorded in `c`.
 */
export const normalizeSpec = (
  src: EnsembleSpecSource,
  limits: SpecLimits,
  c: Collector,
): NormalizedSpec | undefined => {
  const before = c.errors.length;
  const maxDurationMs = parseDurationMs(src.max_duration, FIELD_LIMITS.maxDurationMs);
  if (!maxDurationMs.ok) c.error(['max_duration'], 'INVALID_VALUE', maxDurationMs.reason);
  else if (maxDurationMs.value === 0)
    c.error(['max_duration'], 'OUT_OF_RANGE', 'max_duration must be greater than 0');
  const ensembleMs = maxDurationMs.ok && maxDurationMs.value > 0 ? maxDurationMs.value : undefined;

  const names = Object.keys(src.allocations).sort();
  if (names.length === 0)
    c.error(['allocations'], 'MISSING_FIELD', 'an ensemble needs at least one allocation');
  if (names.length > limits.maxAllocations) {
    c.error(
      ['allocations'],
      'LIMIT_EXCEEDED',
      `${names.length} allocations; the limit is ${limits.maxAllocations}`,
    );
  }
  const allocations: Allocation[] = [];
  for (const name of names) {
    const a = normalizeAllocation(name, src.allocations[name]!, ensembleMs, c);
    if (a) allocations.push(a);
  }

  // Job-wide rules over allocations.
  const gpus = totalGpus({ allocations });
  if (gpus > limits.maxGpusPerJob) {
    c.error(
      ['allocations'],
      'LIMIT_EXCEEDED',
      `the job asks for ${gpus} GPUs; the limit is ${limits.maxGpusPerJob} per job`,
    );
  }
  const dnsOwners = new Map<string, string>();
  for (const a of allocations) {
    const owner = dnsOwners.get(a.dnsName);
    if (owner !== undefined) {
      c.error(
        ['allocations', a.name, 'dns_name'],
        'DUPLICATE',
        `dns_name '${a.dnsName}' is also used by allocation '${owner}'`,
      );
    }
    dnsOwners.set(a.dnsName, a.name);
  }

  checkReferences(names, src.nodes, src.edge_constraints, c);

  // Nodes.
  const nodeNames = Object.keys(src.nodes ?? {}).sort();
  if (nodeNames.length > limits.maxNodes) {
    c.error(['nodes'], 'LIMIT_EXCEEDED', `${nodeNames.length} nodes; the limit is ${limits.maxNodes}`);
  }
  const byAllocation = new Map(allocations.map((a) => [a.name, a]));
  const hostOf = new Map<string, string>();
  const nodes: EnsembleNode[] = [];
  for (const nodeName of nodeNames) {
    const n = src.nodes![nodeName]!;
    const nPath = ['nodes', nodeName];
    if (Object.hasOwn(src.allocations, nodeName)) {
      c.error(
        nPath,
        'CONFLICT',
        `'${nodeName}' names both a node and an allocation; edge constraints could not tell them apart`,
        true,
      );
    }
    const seen = new Set<string>();
    const publicPorts = new Map<string, string>();
    n.allocations.forEach((allocName, i) => {
      const aPath = [...nPath, 'allocations', i];
      if (seen.has(allocName)) {
        c.error(aPath, 'DUPLICATE', `allocation '${allocName}' is listed twice`);
        return;
      }
      seen.add(allocName);
      if (!Object.hasOwn(src.allocations, allocName)) return; // reported by checkReferences
      const host = hostOf.get(allocName);
      if (host !== undefined) {
        c.error(
          aPath,
          'CONFLICT',
          `allocation '${allocName}' is already on node '${host}'; an allocation sits on one node`,
        );
        return;
      }
      hostOf.set(allocName, nodeName);
      const a = byAllocation.get(allocName);
      if (a?.distributed && a.distributed.maxNodes > 1) {
        c.error(
          aPath,
          'CONFLICT',
          `'${allocName}' is a gang of up to ${a.distributed.maxNodes} nodes and cannot be pinned to one node — set its max_nodes: 1 or remove it here`,
        );
      }
      for (const p of a?.ports ?? []) {
        if (p.public === null) continue;
        const key = `${p.protocol}/${p.public}`;
        const other = publicPorts.get(key);
        if (other !== undefined) {
          c.error(
            aPath,
            'DUPLICATE',
            `public ${p.protocol} port ${p.public} is used by both '${other}' and '${allocName}' on this node`,
          );
        }
        publicPorts.set(key, allocName);
      }
    });
    nodes.push({
      name: nodeName,
      allocations: [...seen].sort(),
      peer: n.peer ?? null,
      location: normalizeLocation(n.location, [...nPath, 'location'], c),
    });
  }

  // Edge constraints.
  const edgeList = src.edge_constraints ?? [];
  if (edgeList.length > limits.maxEdgeConstraints) {
    c.error(
      ['edge_constraints'],
      'LIMIT_EXCEEDED',
      `${edgeList.length} edge constraints; the limit is ${limits.maxEdgeConstraints}`,
    );
  }
  const endpoints = [...names, ...nodeNames];
  const edges = new Map<string, EdgeConstraint>();
  edgeList.forEach((e, i) => {
    const ePath = ['edge_constraints', i];
    const before2 = c.errors.length;
    if (e.between.some((end) => !endpoints.includes(end))) return; // reported by checkReferences
    const [a, b] = [...e.between].sort() as [string, string];
    if (a === b)
      c.error(
        [...ePath, 'between'],
        'INVALID_VALUE',
        `an edge joins two different names, not '${a}' to itself`,
      );
    else if (
      hostOf.get(a) === b ||
      hostOf.get(b) === a ||
      (hostOf.has(a) && hostOf.get(a) === hostOf.get(b))
    ) {
      c.error(
        [...ePath, 'between'],
        'CONFLICT',
        `'${a}' and '${b}' are on the same node; there is no network between them`,
      );
    }
    if (e.max_rtt === undefined && e.min_bandwidth === undefined) {
      c.error(ePath, 'MISSING_FIELD', 'an edge constraint needs max_rtt, min_bandwidth or both');
    }
    const rtt = e.max_rtt === undefined ? null : parseDurationUs(e.max_rtt, FIELD_LIMITS.maxRttUs);
    const bw =
      e.min_bandwidth === undefined ? null : parseBandwidth(e.min_bandwidth, FIELD_LIMITS.maxBandwidthBps);
    if (rtt && !rtt.ok) c.error([...ePath, 'max_rtt'], 'INVALID_VALUE', rtt.reason);
    if (rtt?.ok && rtt.value === 0)
      c.error([...ePath, 'max_rtt'], 'OUT_OF_RANGE', 'max_rtt must be greater than 0');
    if (bw && !bw.ok) c.error([...ePath, 'min_bandwidth'], 'INVALID_VALUE', bw.reason);
    if (bw?.ok && bw.value === 0)
      c.error([...ePath, 'min_bandwidth'], 'OUT_OF_RANGE', 'min_bandwidth must be greater than 0');
    const key = `${a}\u0000${b}`;
    if (edges.has(key))
      c.error(ePath, 'DUPLICATE', `another edge constraint already joins '${a}' and '${b}'; merge them`);
    if (c.errors.length > before2) return;
    edges.set(key, {
      between: [a, b],
      maxRttUs: rtt?.ok ? rtt.value : null,
      minBandwidthBps: bw?.ok ? bw.value : null,
    });
  });

  const budget = normalizeBudget(src.budget, c);
  if (c.errors.length > before || budget === undefined || ensembleMs === undefined) return undefined;

  const labels: Record<string, string> = {};
  for (const k of Object.keys(src.metadata.labels ?? {}).sort()) labels[k] = src.metadata.labels![k]!;
  if (Object.keys(labels).length > FIELD_LIMITS.maxLabels) {
    c.error(['metadata', 'labels'], 'LIMIT_EXCEEDED', `at most ${FIELD_LIMITS.maxLabels} labels`);
    return undefined;
  }

  const spec: NormalizedSpec = {
    apiVersion: src.apiVersion,
    kind: src.kind,
    metadata: { name: src.metadata.name, description: src.metadata.description ?? null, labels },
    maxDurationMs: ensembleMs,
    subnet: src.subnet ?? null,
    budget,
    allocations: allocations.sort(byName),
    nodes: nodes.sort(byName),
    edgeConstraints: [...edges.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, e]) => e),
  };

  if (budget !== null) {
    if (gpus === 0) c.warn(['budget'], 'the budget prices GPU-hours, but no allocation uses GPUs');
    const price = BigInt(budget.maxPricePerGpuHourMinor);
    const uncapped = allocations.reduce((acc, a) => acc + allocationCeiling(a, price), 0n);
    if (budget.maxTotalMinor !== null && BigInt(budget.maxTotalMinor) < uncapped) {
      c.warn(
        ['budget', 'max_total'],
        `max_total ${formatMoney(BigInt(budget.maxTotalMinor), budget.decimals)} ${budget.asset} is below price × GPUs × max_duration (${formatMoney(uncapped, budget.decimals)} ${budget.asset}); the job stops when it is spent`,
      );
    }
  }
  for (const a of allocations) {
    if (a.type === 'service' && a.failureRecovery.strategy === 'stay_down') {
      c.warn(
        ['allocations', a.name, 'failure_recovery', 'strategy'],
        'a service with stay_down is not restarted when it exits',
      );
    }
    const d = a.distributed;
    if (
      d !== null &&
      minNodes(a) > 1 &&
      a.resources.gpus !== null &&
      d.framework !== 'custom' &&
      d.placement !== 'spread' &&
      d.interconnect.minBandwidthBps === null &&
      d.interconnect.maxRttUs === null
    ) {
      c.warn(
        ['allocations', a.name, 'distributed', 'interconnect'],
        'a multi-node GPU gang without interconnect requirements may be placed on slow links',
      );
    }
  }
  return spec;
};
