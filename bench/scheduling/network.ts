import {
  type ClusterSnapshot,
  type ClusterSnapshotInput,
  createSnapshot,
  type GangRequest,
  gangRequest,
  generateCluster,
  hostLink,
  type LinkInput,
  type LinkSource,
  type Placement,
  schedule,
  singleGang,
  verifyPlacement,
  withMeasuredLinks,
  withMeasuredNetwork,
} from '@gpunet/scheduling';
import type { ProjectionBenchResult } from './projection';
import { type Distribution, distribution, peakRssMiB } from './stats';

/**
 * The placement core on a measured network against the network the scheduler assumes today, on
 * the same providers and GPUs in the same run, and what one new measurement costs the core.
 *
 * - constant: what `services/scheduler/src/domain/placement-input.ts` builds while nothing is
 *   measured (its `DEFAULT_NETWORK`): every provider its own site, no links, no coordinates, 10
 *   Gbit/s NICs and LANs, 1 Gbit/s and 30 ms between providers;
 * - sites: the generator's own network, which the speed section uses — sites with coordinates,
 *   measured links between some data-centre sites, no host links;
 * - measured: `withMeasuredNetwork` of it — the generator's sites as same-site groups, measured host links
 *   (every pair inside small sites, 8 peers per host nearby and at random), relayed pairs, a fitted
 *   coordinate with its error for every host, the generator's site links.
 * Generating and compiling the snapshots is outside every timing.
 */
export interface NetworkBenchOptions {
  readonly providers: number;
  /** Decisions per case after the first (cold) one. */
  readonly runs: number;
  /** Link measurements applied one after another with `withMeasuredLinks`. */
  readonly updates: number;
  /** `createSnapshot` runs with one more link. */
  readonly rebuilds: number;
  readonly seed: number;
  readonly log?: (line: string) => void;
}

/** The scheduler's figures while benchmarking has measured nothing (mirrors its `DEFAULT_NETWORK`). */
const SCHEDULER_DEFAULTS = {
  nicBandwidthBps: 10e9,
  lanBandwidthBps: 10e9,
  lanRttUs: 200,
  wanBandwidthBps: 1e9,
  wanRttUs: 30_000,
} as const;

/** The cluster as the scheduler sees it today: its GPUs, none of its network. */
export const constantNetwork = (input: ClusterSnapshotInput): ClusterSnapshotInput => ({
  providers: input.providers.map((p) => ({
    ...p,
    hosts: p.hosts.map((h) => ({
      ...h,
      siteId: p.id,
      nicBandwidthBps: SCHEDULER_DEFAULTS.nicBandwidthBps,
      coordinates: null,
    })),
  })),
  network: {
    sites: input.providers.map((p) => ({
      id: p.id,
      lanBandwidthBps: SCHEDULER_DEFAULTS.lanBandwidthBps,
      lanRttUs: SCHEDULER_DEFAULTS.lanRttUs,
      coordinates: null,
    })),
    hostLinks: [],
    siteLinks: [],
    defaultWanBandwidthBps: SCHEDULER_DEFAULTS.wanBandwidthBps,
    defaultWanRttUs: SCHEDULER_DEFAULTS.wanRttUs,
  },
});

/** The 16-GPU gang of the headline figure: two request shapes, alternated. */
export const GANG16: readonly GangRequest[] = [
  gangRequest({ name: 'any', gpuCount: 16, maxNodes: 4 }),
  gangRequest({
    name: 'dc',
    gpuCount: 16,
    vendor: 'nvidia',
    models: ['H100-SXM', 'A100-80G'],
    minVramBytes: 40e9,
    maxNodes: 4,
  }),
];
/** As example 02 (`max_rtt: 20ms`) asks. */
export const MAX_RTT = gangRequest({
  name: 'max-rtt',
  gpuCount: 16,
  maxNodes: 8,
  interconnect: { minBandwidthBps: null, maxRttUs: 20_000, sameSite: false },
});
/** As example 03 (`min_bandwidth: 2Gbps`) asks. */
export const MIN_BANDWIDTH = gangRequest({
  name: 'min-bandwidth',
  gpuCount: 16,
  maxNodes: 8,
  interconnect: { minBandwidthBps: 2e9, maxRttUs: null, sameSite: false },
});

export interface CaseResult {
  readonly network: NetworkKind;
  readonly gang: string;
  readonly runs: number;
  readonly coldMs: number;
  readonly wallMs: Distribution;
  readonly cpuMs: Distribution;
  readonly placed: number;
  /** Hard constraints a placement broke, by `verifyPlacement` (outside the timing): 0 expected. */
  readonly violations: number;
  readonly meanStepMs: number;
  /** Over pairs of chosen nodes: where their link figure came from. */
  readonly pairSources: Readonly<Partial<Record<LinkSource, number>>>;
  /** Peak RSS of the process once this case ran (monotonic over the run), MiB. */
  readonly peakRssMiB: number;
}

export interface UpdateCost {
  /** One link applied to the compiled snapshot, ms. */
  readonly applyMs: Distribution;
  /** The first decision after it (eligibility kept or rebuilt), ms. */
  readonly nextDecisionMs: Distribution;
}

export interface SnapshotSummary {
  readonly hosts: number;
  readonly sites: number;
  readonly hostLinks: number;
  readonly siteLinks: number;
  readonly relayed: number;
  /** Heap the compiled snapshot holds (after GC; NaN without --expose-gc), MiB. */
  readonly heapMiB: number;
}

export interface NetworkBenchResult {
  readonly snapshots: Readonly<Record<NetworkKind, SnapshotSummary>>;
  readonly cases: readonly CaseResult[];
  readonly measurement: {
    readonly rebuild: UpdateCost;
    readonly incremental: UpdateCost;
    /** `updates` measurements applied one after another with `withMeasuredLinks`, each, ms. */
    readonly chainedApplyMs: Distribution;
    /** Whether the decisions after both paths were identical (same request, same seed). */
    readonly sameDecisions: boolean;
    /** The scheduler projection's cost of consuming one `link.measured`: see `projectionConsumerCost`. */
    readonly projection: ProjectionCost;
  };
}

/**
 * The scheduler's cost of applying one measurement to its projection (its consumer upserting one
 * `link.measured` into its Postgres tables), to stand beside the core's cost above. It needs NATS
 * and Postgres, so the projection section (projection.ts) measures it; this takes that section's
 * result when it ran in the same process, and otherwise says where the figure comes from.
 */
export type ProjectionCost =
  | { readonly status: 'not-run'; readonly reason: string }
  | {
      readonly status: 'measured';
      /** Wall ms per `link.measured` over a flood, and its consumer-process CPU ms. */
      readonly applyMs: { readonly wall: number; readonly cpu: number };
      /** The same for the no-op consumer measured in the same run. */
      readonly baselineMs: { readonly wall: number; readonly cpu: number };
    };
export const projectionConsumerCost = (measured: ProjectionBenchResult | null = null): ProjectionCost => {
  if (measured === null)
    return {
      status: 'not-run',
      reason: 'measured by the projection section (--sections projection, needs NATS and Postgres)',
    };
  if (measured.status === 'skipped')
    return { status: 'not-run', reason: `projection section skipped: ${measured.reason}` };
  const of = (consumer: 'scheduler' | 'noop') => {
    const c = measured.apply.find((a) => a.consumer === consumer && a.event === 'link.measured')!;
    return { wall: c.wallMsPerEvent, cpu: c.cpuMsPerEvent };
  };
  return { status: 'measured', applyMs: of('scheduler'), baselineMs: of('noop') };
};

const gc = (globalThis as { gc?: () => void }).gc;
const heapMiB = (): number => {
  if (gc === undefined) return NaN;
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const timed = <T>(f: () => T): { value: T; ms: number; cpuMs: number } => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { value, ms, cpuMs: (c.user + c.system) / 1000 };
};

const jobId = (g: GangRequest, seed: number): string => `${g.name}-${seed}`;

const place = (s: ClusterSnapshot, g: GangRequest, seed: number): Placement | null => {
  const r = schedule(s, singleGang(jobId(g, seed), g), { seed });
  return r.code === 'Success' ? r.placement : null;
};

const runCase = (
  network: CaseResult['network'],
  s: ClusterSnapshot,
  label: string,
  requests: readonly GangRequest[],
  runs: number,
  seed: number,
): CaseResult => {
  const coldMs =
    requests.reduce((sum, g, i) => sum + timed(() => place(s, g, seed + i)).ms, 0) / requests.length;
  const wall: number[] = [];
  const cpu: number[] = [];
  const steps: number[] = [];
  const sources: Partial<Record<LinkSource, number>> = {};
  let placed = 0;
  let violations = 0;
  for (let i = 0; i < runs; i++) {
    const g = requests[i % requests.length]!;
    const t = timed(() => place(s, g, seed + 1000 + i));
    wall.push(t.ms);
    cpu.push(t.cpuMs);
    if (t.value === null) continue;
    placed++;
    violations += verifyPlacement(s, singleGang(jobId(g, seed + 1000 + i), g), t.value).length;
    const allocation = t.value.allocations[0]!;
    steps.push(allocation.prediction.stepUs / 1000);
    const hosts = allocation.nodes.map((n) => s.inventory.hostById.get(n.hostId)!);
    for (let a = 0; a < hosts.length; a++) {
      for (let b = a + 1; b < hosts.length; b++) {
        const source = hostLink(s.inventory, hosts[a]!, hosts[b]!).source;
        sources[source] = (sources[source] ?? 0) + 1;
      }
    }
  }
  return {
    network,
    gang: label,
    runs,
    coldMs,
    wallMs: distribution(wall),
    cpuMs: distribution(cpu),
    placed,
    violations,
    meanStepMs: distribution(steps).mean,
    pairSources: sources,
    peakRssMiB: peakRssMiB(),
  };
};

/** A re-measured pair of the matrix (even `i`) or a pair never measured (odd), with new figures. */
const newMeasurement = (input: ClusterSnapshotInput, s: ClusterSnapshot, i: number): LinkInput => {
  const hosts = s.inventory.hosts;
  const links = input.network.hostLinks;
  const x = (i * 104_729) % hosts.length;
  const y = (x + 1 + ((i * 15_485_863) % (hosts.length - 1))) % hosts.length;
  const { a, b } = i % 2 === 0 ? links[(i * 7_919) % links.length]! : { a: hosts[x]!.id, b: hosts[y]!.id };
  return {
    a,
    b,
    bandwidthBps: (1 + (i % 20)) * 0.5e9,
    rttUs: 1_000 + ((i * 37) % 80) * 1_000,
    measuredAt: '2026-12-01T13:00:00.000Z',
  };
};

/**
 * One measurement into the compiled snapshot both ways: `createSnapshot` of the input with the link
 * appended, and `withMeasuredLinks` — each followed by the next decision, which must be the same.
 * Then `updates` measurements one after another with `withMeasuredLinks` (the table's folds included).
 */
const measurementCost = (
  input: ClusterSnapshotInput,
  s: ClusterSnapshot,
  o: NetworkBenchOptions,
): NetworkBenchResult['measurement'] => {
  // A running scheduler's snapshot has decided before: its memo is warm.
  for (const [i, g] of GANG16.entries()) place(s, g, o.seed + i);
  const next = (snapshot: ClusterSnapshot, i: number) =>
    timed(() => place(snapshot, GANG16[i % GANG16.length]!, o.seed + 5000 + i));
  const cost = {
    rebuild: { apply: [] as number[], next: [] as number[] },
    incremental: { apply: [] as number[], next: [] as number[] },
  };
  const decisions = { rebuild: [] as (Placement | null)[], incremental: [] as (Placement | null)[] };
  for (let i = 0; i < o.rebuilds; i++) {
    const link = newMeasurement(input, s, i);
    const r = timed(() =>
      createSnapshot({
        ...input,
        network: { ...input.network, hostLinks: [...input.network.hostLinks, link] },
      }),
    );
    const u = timed(() => withMeasuredLinks(s, { hostLinks: [link] }));
    for (const [path, t] of [
      ['rebuild', r],
      ['incremental', u],
    ] as const) {
      cost[path].apply.push(t.ms);
      const d = next(t.value, i);
      cost[path].next.push(d.ms);
      decisions[path].push(d.value);
    }
  }
  const chained: number[] = [];
  let current = s;
  for (let i = 0; i < o.updates; i++) {
    const link = newMeasurement(input, s, i);
    const t = timed(() => withMeasuredLinks(current, { hostLinks: [link] }));
    chained.push(t.ms);
    current = t.value;
  }
  return {
    rebuild: { applyMs: distribution(cost.rebuild.apply), nextDecisionMs: distribution(cost.rebuild.next) },
    incremental: {
      applyMs: distribution(cost.incremental.apply),
      nextDecisionMs: distribution(cost.incremental.next),
    },
    chainedApplyMs: distribution(chained),
    sameDecisions: JSON.stringify(decisions.rebuild) === JSON.stringify(decisions.incremental),
    projection: projectionConsumerCost(),
  };
};

const NETWORKS = ['constant', 'sites', 'measured'] as const;
export type NetworkKind = (typeof NETWORKS)[number];

export const networkBench = (o: NetworkBenchOptions): NetworkBenchResult => {
  const log = o.log ?? (() => {});
  const base = generateCluster({ providers: o.providers, reservedFraction: 0.4 }, o.seed);
  const inputs: Record<NetworkKind, ClusterSnapshotInput> = {
    constant: constantNetwork(base),
    sites: base,
    measured: withMeasuredNetwork(base, {}, o.seed),
  };
  const compiled = {} as Record<NetworkKind, ClusterSnapshot>;
  const snapshots = {} as Record<NetworkKind, SnapshotSummary>;
  for (const kind of NETWORKS) {
    const before = heapMiB();
    const s = createSnapshot(inputs[kind]);
    compiled[kind] = s;
    snapshots[kind] = {
      hosts: s.inventory.hosts.length,
      sites: s.inventory.sites.length,
      hostLinks: s.inventory.hostLinks.size,
      siteLinks: s.inventory.siteLinks.size,
      relayed: inputs[kind].network.hostLinks.filter((l) => l.relayed === true).length,
      heapMiB: heapMiB() - before,
    };
  }
  for (const kind of NETWORKS) {
    const n = snapshots[kind];
    log(
      `  ${kind}: ${n.hosts.toLocaleString()} hosts, ${n.sites.toLocaleString()} sites, ` +
        `${n.hostLinks.toLocaleString()} host links (${n.relayed.toLocaleString()} relayed), ${n.siteLinks.toLocaleString()} site links`,
    );
  }
  const cases: CaseResult[] = [];
  for (const [label, requests] of [
    ['16 GPUs', GANG16],
    ['16 GPUs, max_rtt 20 ms', [MAX_RTT]],
    ['16 GPUs, min_bandwidth 2 Gbit/s', [MIN_BANDWIDTH]],
  ] as const) {
    for (const kind of NETWORKS) cases.push(runCase(kind, compiled[kind], label, requests, o.runs, o.seed));
  }
  return { snapshots, cases, measurement: measurementCost(inputs.measured, compiled.measured, o) };
};
