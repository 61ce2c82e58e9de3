/**
 * bench/scheduling — the placement core's quality, speed and behaviour on real and generated
 * clusters, always next to baselines measured in the same run (so ratios hold on any machine).
 *
 *   npm run bench:scheduling [-- --sections quality,speed,network,projection,throughput,sim,trace --quick]
 *
 * Sections:
 * - quality     ≥ 200 small instances (≤ 40 GPUs): predicted step time against the exhaustive
 *               optimum, with first-fit, best-fit and a Ray-PACK-like baseline;
 * - speed       decision latency for 8-, 16-, 64- and 512-GPU gangs on a generated 10,000-provider
 *               snapshot (~80k GPUs, 40% busy): sampled (default) and full search, baselines;
 * - network     16-GPU gangs over 10,000 providers on a measured link matrix beside the constant
 *               network the scheduler assumes today (same providers, same run; also with max_rtt
 *               and min_bandwidth), and the cost of applying one link measurement (network.ts);
 * - projection  the scheduler's own projection of benchmarking's measurements on NATS JetStream and
 *               Postgres: one `link.measured` / `gpu.benchmarked` applied by its real consumer
 *               (events/s, wall and CPU per event, commit latency, peak RSS) beside a no-op
 *               consumer, and the placement round's load of it for 100–10,000 candidates beside a
 *               bare round trip (projection.ts); skipped, saying why, without NATS or Postgres;
 * - throughput  single-node jobs (1–8 GPUs) placed and applied one after another, jobs/s;
 * - sim         a synthetic job stream on generated 1k- and 10k-provider clusters: allocation rate,
 *               queueing delay, decision latency, predicted step time;
 * - trace       the Alibaba GPU trace (1,213 nodes, its 7,064 GPU tasks; read from the folder
 *               GPUNET_ALIBABA_TRACE names, skipped without it — bench/support/alibaba-trace/README.md):
 *               the paper's fill experiment and a time replay with
 *               compressed arrivals.
 * Prints tables and peak RSS; writes bench/scheduling/results.json.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  baselines,
  type ClusterSnapshot,
  createSnapshot,
  exhaustiveOptimum,
  freeGpuCount,
  type GangRequest,
  gangRequest,
  generateCluster,
  generateQualityInstance,
  schedule,
  singleGang,
  applyPlacement,
  releasePlacement,
  type Placement,
} from '@gpunet/scheduling';
import { traceDir } from '../support/alibaba-trace/trace';
import { retimed, traceCluster, traceTasks } from './alibaba';
import { bestFit, firstFit, gpunet, type Policy } from './policies';
import { networkBench, projectionConsumerCost, type UpdateCost } from './network';
import { type ProjectionBenchResult, projectionBench } from './projection';
import { fill, simulate } from './sim';
import { distribution, fmt, peakRssMiB, table } from './stats';
import { GANGS, MIXED, type SizeMix, syntheticJobs } from './workload';

const { values } = parseArgs({
  options: {
    sections: { type: 'string', default: 'quality,speed,network,projection,throughput,sim,trace' },
    quick: { type: 'boolean', default: false },
    load: { type: 'string', default: '1.0' },
  },
});
const sections = new Set(values.sections.split(','));
const quick = values.quick;
const results: Record<string, unknown> = { startedAt: new Date().toISOString(), quick };
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

/** Quality: ≥ 200 solvable small instances against the exhaustive optimum. */
const quality = (): void => {
  console.log('\n== quality: predicted step time vs the exhaustive optimum (small instances, ≤ 40 GPUs)');
  const policies: [string, (s: ClusterSnapshot, r: GangRequest, seed: number) => Placement | null][] = [
    [
      'gpunet',
      (s, r, seed) => {
        const out = schedule(s, singleGang('q', r), { seed });
        return out.code === 'Success' ? out.placement : null;
      },
    ],
    ['first-fit', (s, r) => baselines.firstFit(s, 'q', r)],
    ['best-fit', (s, r) => baselines.bestFit(s, 'q', r)],
    ['ray-pack', (s, r) => baselines.rayPack(s, 'q', r)],
  ];
  const ratios = new Map<string, number[]>(policies.map(([n]) => [n, []]));
  const failures = new Map<string, number>(policies.map(([n]) => [n, 0]));
  let solvable = 0;
  for (let seed = 0; seed < 300; seed++) {
    const { cluster, request } = generateQualityInstance(seed);
    const s = createSnapshot(cluster);
    const optimum = exhaustiveOptimum(s, request);
    if (optimum === null) continue;
    solvable++;
    for (const [name, place] of policies) {
      const p = place(s, request, seed);
      if (p === null) failures.set(name, failures.get(name)! + 1);
      else ratios.get(name)!.push(p.allocations[0]!.prediction.stepUs / optimum.stepUs);
    }
  }
  const rows: (string | number)[][] = [
    ['policy', 'within 5%', 'within 20%', 'mean ratio', 'p90 ratio', 'worst', 'no gang found'],
  ];
  const out: Record<string, unknown> = { instances: solvable };
  for (const [name] of policies) {
    const r = ratios.get(name)!;
    const d = distribution(r);
    const within5 = r.filter((x) => x <= 1.05).length / solvable;
    const within20 = r.filter((x) => x <= 1.2).length / solvable;
    rows.push([
      name,
      `${(within5 * 100).toFixed(1)}%`,
      `${(within20 * 100).toFixed(1)}%`,
      d.mean,
      d.p90,
      d.max,
      failures.get(name)!,
    ]);
    out[name] = {
      within5,
      within20,
      meanRatio: d.mean,
      p90Ratio: d.p90,
      worst: d.max,
      failed: failures.get(name),
    };
  }
  console.log(`  ${solvable} solvable instances (target: gpunet within 5% of optimum in ≥ 95%)`);
  table(rows);
  results.quality = out;
};

/** A snapshot of the 10,000-provider cluster with 40% of GPUs busy (scattered). */
const bigSnapshot = (): ClusterSnapshot => {
  const t0 = performance.now();
  const s = createSnapshot(generateCluster({ providers: 10_000, reservedFraction: 0.4 }, 1));
  const inv = s.inventory;
  console.log(
    `  snapshot: ${inv.providers.length.toLocaleString()} providers, ${inv.hosts.length.toLocaleString()} hosts, ` +
      `${inv.gpus.length.toLocaleString()} GPUs (${freeGpuCount(s).toLocaleString()} free), ${inv.sites.length.toLocaleString()} sites; built in ${fmt((performance.now() - t0) / 1000)} s`,
  );
  results.bigCluster = {
    providers: inv.providers.length,
    hosts: inv.hosts.length,
    gpus: inv.gpus.length,
    free: freeGpuCount(s),
    sites: inv.sites.length,
  };
  return s;
};

const gangVariants = (n: number): GangRequest[] => [
  gangRequest({ name: 'any', gpuCount: n, maxNodes: Math.max(1, Math.ceil(n / 4)) }),
  gangRequest({
    name: 'dc',
    gpuCount: n,
    vendor: 'nvidia',
    models: ['H100-SXM', 'A100-80G'],
    minVramBytes: 40e9,
    maxNodes: Math.max(1, Math.ceil(n / 4)),
  }),
  gangRequest({
    name: 'near',
    gpuCount: n,
    minVramBytes: 24e9,
    maxNodes: Math.max(1, Math.ceil(n / 2)),
    interconnect: { minBandwidthBps: null, maxRttUs: 5_000, sameSite: false },
  }),
];

const speed = (s: ClusterSnapshot): void => {
  console.log('\n== speed: decision latency on the 10,000-provider snapshot');
  const rows: (string | number)[][] = [
    [
      'gang',
      'runs',
      'cold ms',
      'p50 ms',
      'p99 ms',
      'cpu p50',
      'cpu p99',
      'full p50',
      'full p99',
      'first-fit p50',
      'best-fit p50',
      'step ms',
      'full step',
      'ff step',
      'bf step',
    ],
  ];
  const out: Record<string, unknown> = {};
  for (const n of [8, 16, 64, 512]) {
    const runs = quick ? (n >= 512 ? 6 : 30) : n >= 512 ? 30 : n >= 64 ? 90 : 210;
    const variants = gangVariants(n);
    const cold: number[] = [];
    const warm: number[] = [];
    const full: number[] = [];
    const ff: number[] = [];
    const bf: number[] = [];
    const steps = { ours: [] as number[], full: [] as number[], ff: [] as number[], bf: [] as number[] };
    const cpu: number[] = [];
    const timed = (f: () => Placement | null, into: number[], step: number[], cpuInto?: number[]): void => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const p = f();
      into.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpuInto?.push((c.user + c.system) / 1000);
      if (p !== null) step.push(p.allocations[0]!.prediction.stepUs / 1000);
    };
    const place = (g: GangRequest, seed: number, minHostsToScore?: number): Placement | null => {
      const r = schedule(s, singleGang(`g${n}-${seed}`, g), {
        seed,
        ...(minHostsToScore === undefined ? {} : { minHostsToScore }),
      });
      return r.code === 'Success' ? r.placement : null;
    };
    // The first decision for a request shape runs the filters over every GPU (then memoized).
    for (const [i, g] of variants.entries()) timed(() => place(g, i), cold, []);
    for (let i = 0; i < runs; i++)
      timed(() => place(variants[i % variants.length]!, 1000 + i), warm, steps.ours, cpu);
    const few = Math.max(3, Math.floor(runs / 6));
    for (let i = 0; i < few; i++) {
      const g = variants[i % variants.length]!;
      timed(() => place(g, 2000 + i, Infinity), full, steps.full);
      timed(() => baselines.firstFit(s, `ff${i}`, g), ff, steps.ff);
      timed(() => baselines.bestFit(s, `bf${i}`, g), bf, steps.bf);
    }
    const d = distribution(warm);
    const df = distribution(full);
    const m = (x: number[]) => distribution(x).mean;
    rows.push([
      `${n} GPUs`,
      runs,
      distribution(cold).mean,
      d.p50,
      d.p99,
      distribution(cpu).p50,
      distribution(cpu).p99,
      df.p50,
      df.p99,
      distribution(ff).p50,
      distribution(bf).p50,
      m(steps.ours),
      m(steps.full),
      m(steps.ff),
      m(steps.bf),
    ]);
    out[`gang${n}`] = {
      runs,
      coldMeanMs: distribution(cold).mean,
      sampled: d,
      sampledCpuMs: distribution(cpu),
      full: df,
      firstFit: distribution(ff),
      bestFit: distribution(bf),
      meanStepMs: {
        sampled: m(steps.ours),
        full: m(steps.full),
        firstFit: m(steps.ff),
        bestFit: m(steps.bf),
      },
    };
  }
  console.log(
    '  (ms of wall time per decision; cpu = CPU time of the process for it, steadier on a shared machine;',
  );
  console.log(
    '   sampled = default: whole sites in seeded rotation until ≥ 1,000 hosts and 4× the gang; full = every host)',
  );
  table(rows);
  const g16 = out.gang16 as { sampled: { p50: number; p99: number } };
  console.log(
    `  16-GPU gang: p50 ${fmt(g16.sampled.p50)} ms (target < 50), p99 ${fmt(g16.sampled.p99)} ms (target < 200)`,
  );
  results.speed = out;
};

/** Targets of placement on a measured network: the 16-GPU gang over 10,000 providers. */
const NETWORK_TARGET = { p50Ms: 20, p99Ms: 100 } as const;

/**
 * The scheduler's projection of the measurements on NATS and Postgres (projection.ts): what one
 * `link.measured` or `gpu.benchmarked` costs its consumer, and the placement round's load of it.
 */
const projection = async (): Promise<ProjectionBenchResult> => {
  console.log(
    "\n== projection: the scheduler's measurements consumer and the per-round load, beside a no-op consumer and a bare round trip",
  );
  const r = await projectionBench({
    events: quick ? 500 : 2000,
    paced: quick ? 200 : 500,
    rate: 250,
    providers: quick ? 1_000 : 10_000,
    candidates: quick ? [100, 1_000] : [100, 1_000, 10_000],
    runs: quick ? 5 : 20,
    log: (line) => console.log(line),
  });
  if (r.status === 'skipped') {
    console.log(`  skipped: ${r.reason}`);
  } else {
    console.log(
      `  peak RSS: scheduler ${fmt(r.peakRssMiB.scheduler)} MiB, no-op consumer ${fmt(r.peakRssMiB.noop)} MiB; ` +
        `matrix ${r.matrix.providers.toLocaleString()} providers, ${r.matrix.links.toLocaleString()} directed links ` +
        `(load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs)`,
    );
  }
  results.projection = r;
  return r;
};

const network = (measured: ProjectionBenchResult | null): void => {
  console.log(
    '\n== network: 16-GPU gangs on a measured link matrix beside the constant network (10,000 providers)',
  );
  const r = networkBench({
    providers: 10_000,
    runs: quick ? 30 : 210,
    rebuilds: quick ? 2 : 5,
    updates: quick ? 500 : 5000,
    seed: 1,
    log: (line) => console.log(line),
  });
  const projectionCost = projectionConsumerCost(measured);
  const constantOf = (gang: string) => r.cases.find((c) => c.network === 'constant' && c.gang === gang)!;
  table([
    [
      'gang',
      'network',
      'runs',
      'placed',
      'cold ms',
      'p50 ms',
      'p99 ms',
      'cpu p50',
      'cpu p99',
      'p50 vs constant',
      'p99 vs constant',
      'cpu p50 vs constant',
      'violations',
      'step ms',
      'pairs measured',
      'peak RSS MiB',
    ],
    ...r.cases.map((c) => {
      const pairs = Object.values(c.pairSources).reduce((a, b) => a + b, 0);
      const base = constantOf(c.gang);
      return [
        c.gang,
        c.network,
        c.runs,
        c.placed,
        c.coldMs,
        c.wallMs.p50,
        c.wallMs.p99,
        c.cpuMs.p50,
        c.cpuMs.p99,
        ratio(c.wallMs.p50, base.wallMs.p50),
        ratio(c.wallMs.p99, base.wallMs.p99),
        ratio(c.cpuMs.p50, base.cpuMs.p50),
        c.violations,
        c.meanStepMs,
        pairs === 0 ? '–' : `${(((c.pairSources['host-measured'] ?? 0) / pairs) * 100).toFixed(0)}%`,
        c.peakRssMiB,
      ];
    }),
  ]);
  const sn = r.snapshots;
  console.log(
    `  compiled snapshot heap: constant ${fmt(sn.constant.heapMiB)} MiB, sites ${fmt(sn.sites.heapMiB)} MiB, ` +
      `measured ${fmt(sn.measured.heapMiB)} MiB (NaN without --expose-gc)`,
  );
  const head = r.cases.find((c) => c.network === 'measured' && c.gang === '16 GPUs')!;
  const holds = (d: { p50: number; p99: number }): boolean =>
    d.p50 < NETWORK_TARGET.p50Ms && d.p99 < NETWORK_TARGET.p99Ms;
  const held = holds(head.wallMs);
  console.log(
    `  16-GPU gang on the measured matrix: p50 ${fmt(head.wallMs.p50)} ms (target < ${NETWORK_TARGET.p50Ms}), ` +
      `p99 ${fmt(head.wallMs.p99)} ms (target < ${NETWORK_TARGET.p99Ms}): ${held ? 'held' : 'NOT held'} in wall time; ` +
      `CPU p50 ${fmt(head.cpuMs.p50)} ms, p99 ${fmt(head.cpuMs.p99)} ms: ${holds(head.cpuMs) ? 'held' : 'NOT held'} in CPU time ` +
      `(load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs)`,
  );
  const m = r.measurement;
  console.log('  one link measurement applied to the compiled snapshot:');
  const row = (path: string, c: UpdateCost) => [
    path,
    c.applyMs.n,
    c.applyMs.p50,
    c.applyMs.p99,
    c.nextDecisionMs.p50,
    c.nextDecisionMs.p99,
  ];
  table([
    ['path', 'runs', 'apply p50 ms', 'apply p99 ms', 'next decision p50 ms', 'next decision p99 ms'],
    row('createSnapshot again', m.rebuild),
    row('withMeasuredLinks', m.incremental),
    ['withMeasuredLinks, chained', m.chainedApplyMs.n, m.chainedApplyMs.p50, m.chainedApplyMs.p99, '–', '–'],
  ]);
  console.log(
    `  decisions after both paths identical: ${m.sameDecisions ? 'yes' : 'NO'}; ` +
      `the scheduler projection's consumer: ${projectionCost.status === 'measured' ? `${fmt(projectionCost.applyMs.wall)} ms wall, ${fmt(projectionCost.applyMs.cpu)} ms CPU per link.measured (no-op consumer ${fmt(projectionCost.baselineMs.wall)} / ${fmt(projectionCost.baselineMs.cpu)})` : projectionCost.reason}`,
  );
  results.network = {
    target: NETWORK_TARGET,
    targetHeld: { wall: held, cpu: holds(head.cpuMs) },
    loadAverage: loadavg(),
    ...r,
    measurement: { ...m, projection: projectionCost },
  };
};

const throughput = (s0: ClusterSnapshot): void => {
  console.log('\n== throughput: single-node jobs (1–8 GPUs) placed and applied one after another');
  const run = (policy: Policy, jobs: number) => {
    let s = s0;
    const live: Placement[] = [];
    let placed = 0;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < jobs; i++) {
      const n = [1, 1, 2, 4, 8][i % 5]!;
      const p = policy.place(s, `tp-${policy.name}-${i}`, gangRequest({ gpuCount: n, maxNodes: 1 }), i);
      if (p !== null) {
        s = applyPlacement(s, p);
        live.push(p);
        placed++;
      }
      // Jobs finish: keep the number running steady.
      if (live.length > 2000) s = releasePlacement(s, live.shift()!);
    }
    const seconds = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpuSeconds = (c.user + c.system) / 1e6;
    return { jobs, placed, seconds, perSecond: jobs / seconds, cpuSeconds, perCpuSecond: jobs / cpuSeconds };
  };
  const jobs = quick ? 400 : 3000;
  const ours = run(gpunet(), jobs);
  const ff = run(firstFit, Math.max(100, Math.floor(jobs / 10)));
  const bf = run(bestFit, Math.max(100, Math.floor(jobs / 10)));
  table([
    ['policy', 'jobs', 'placed', 'wall s', 'jobs/s', 'jobs/cpu-s', 'vs first-fit'],
    [
      'gpunet',
      ours.jobs,
      ours.placed,
      ours.seconds,
      ours.perSecond,
      ours.perCpuSecond,
      ratio(ours.perSecond, ff.perSecond),
    ],
    ['first-fit', ff.jobs, ff.placed, ff.seconds, ff.perSecond, ff.perCpuSecond, '1.00×'],
    [
      'best-fit',
      bf.jobs,
      bf.placed,
      bf.seconds,
      bf.perSecond,
      bf.perCpuSecond,
      ratio(bf.perSecond, ff.perSecond),
    ],
  ]);
  console.log(
    `  gpunet sustains ${fmt(ours.perSecond)} single-node jobs/s of wall time, ${fmt(ours.perCpuSecond)} per CPU-second (target ≥ 200)`,
  );
  results.throughput = { gpunet: ours, firstFit: ff, bestFit: bf };
};

/** Whether a gang fits an empty cluster (the same verdict for every policy). */
const neverFitsOn = (s: ClusterSnapshot) => {
  const cache = new Map<string, boolean>();
  return (g: GangRequest): boolean => {
    const key = JSON.stringify(g);
    let v = cache.get(key);
    if (v === undefined) {
      v = schedule(s, singleGang('probe', g), { seed: 0 }).code === 'UnschedulableAndUnresolvable';
      cache.set(key, v);
    }
    return v;
  };
};

const simTable = (label: string, rs: ReturnType<typeof simulate>[]): void => {
  console.log(`  ${label}`);
  table([
    [
      'policy',
      'placed',
      'dropped',
      'stuck',
      'alloc rate',
      'wait p50 s',
      'wait p90 s',
      'wait p99 s',
      'decide p50 ms',
      'decide p99 ms',
      'step mean ms',
      'wall s',
    ],
    ...rs.map((r) => [
      r.policy,
      r.placed,
      r.dropped,
      r.stuck,
      `${(r.allocationRate * 100).toFixed(1)}%`,
      r.queueDelayS.p50,
      r.queueDelayS.p90,
      r.queueDelayS.p99,
      r.decisionMs.p50,
      r.decisionMs.p99,
      r.stepMs.mean,
      r.wallS,
    ]),
  ]);
};

const sim = (big: ClusterSnapshot | null): void => {
  console.log(
    '\n== sim: synthetic job streams on generated clusters (FIFO with backfill, 64 tries per pass; rates over the second half)',
  );
  const out: Record<string, unknown> = {};
  const cases: {
    label: string;
    s: ClusterSnapshot;
    count: number;
    load: number;
    sizes: SizeMix;
    note: string;
  }[] = [
    {
      label: '1k providers',
      s: createSnapshot(generateCluster({ providers: 1_000 }, 2)),
      count: quick ? 800 : 4000,
      load: 1.2,
      sizes: MIXED,
      note: 'jobs of 1–64 GPUs (mostly ≤ 8), offered load 1.2',
    },
  ];
  if (big !== null && !quick) {
    cases.push({
      label: '10k providers',
      s: big,
      count: 2500,
      load: 0.6,
      sizes: GANGS,
      note: '40% of GPUs busy throughout; gangs of 8–128 GPUs adding load 0.6',
    });
  }
  for (const c of cases) {
    const tasks = syntheticJobs(c.count, c.s.inventory.gpus.length, c.load, 7, c.sizes);
    const opts = { maxTriesPerPass: 64, warmup: 0.5, neverFits: neverFitsOn(c.s) };
    const rs = [gpunet(), firstFit, bestFit].map((p) => simulate(c.s, tasks, p, opts));
    simTable(
      `${c.label}: ${c.s.inventory.gpus.length.toLocaleString()} GPUs, ${c.count} jobs, ${c.note}`,
      rs,
    );
    out[c.label] = { jobs: c.count, load: c.load, note: c.note, results: rs };
  }
  results.sim = out;
};

const trace = (): void => {
  console.log('\n== trace: Alibaba GPU cluster (cluster-trace-gpu-v2023, Weng et al. ATC ’23)');
  const where = traceDir();
  if ('missing' in where) {
    console.log(`  skipped: ${where.missing} (bench/support/alibaba-trace/README.md)`);
    results.trace = { skipped: where.missing };
    return;
  }
  const s = createSnapshot(traceCluster());
  console.log(
    `  cluster: ${s.inventory.hosts.length} nodes, ${s.inventory.gpus.length} GPUs, ${s.inventory.sites.length} pods`,
  );
  const out: Record<string, unknown> = {};
  // 1. The paper's fill experiment: arrivals in trace order, no departures.
  const raw = traceTasks();
  const ordered = [...raw].sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : 1));
  const fills = [gpunet(), firstFit, bestFit].map((p) => fill(s, ordered, p, 1.2));
  console.log(
    '  fill (gpuspec33; tasks arrive in trace order and never leave, until 120% of the GPUs were asked for)',
  );
  table([
    [
      'policy',
      'arrived',
      'placed',
      'failed',
      'alloc @100% asked',
      'alloc @120% asked',
      'decide p50 ms',
      'decide p99 ms',
      'wall s',
    ],
    ...fills.map((f) => [
      f.policy,
      f.arrived,
      f.placed,
      f.failed,
      `${(f.allocationAtFull * 100).toFixed(1)}%`,
      `${(f.allocationAtEnd * 100).toFixed(1)}%`,
      f.decisionMs.p50,
      f.decisionMs.p99,
      f.wallS,
    ]),
  ]);
  out.fill = fills;
  // 2. Time replay: the trace's tasks, repeated, with Poisson arrivals at the target load.
  const load = Number(values.load);
  const repeat = quick ? 2 : 8;
  const tasks = retimed(raw, s.inventory.gpus.length, load, 1800, repeat, 11);
  const span = tasks[tasks.length - 1]!.arrival - tasks[0]!.arrival;
  const opts = { maxTriesPerPass: 64, warmup: 0.5, neverFits: neverFitsOn(s) };
  const rs = [gpunet(), firstFit, bestFit].map((p) => simulate(s, tasks, p, opts));
  simTable(
    `replay (gpuspec33 × ${repeat}: ${tasks.length} GPU tasks, Poisson arrivals at load ${load} over ${fmt(span / 3600)} h, durations ≤ 30 min; allocation rate over the second half)`,
    rs,
  );
  out.replay = { load, repeat, capS: 1800, tasks: tasks.length, spanS: span, results: rs };
  results.trace = out;
};

const main = async (): Promise<void> => {
  const t0 = performance.now();
  if (sections.has('quality')) quality();
  let big: ClusterSnapshot | null = null;
  if (sections.has('speed') || sections.has('throughput') || (sections.has('sim') && !quick)) {
    console.log('\n== the 10,000-provider snapshot');
    big = bigSnapshot();
  }
  if (sections.has('speed') && big !== null) speed(big);
  const measured = sections.has('projection') ? await projection() : null;
  if (sections.has('network')) network(measured);
  if (sections.has('throughput') && big !== null) throughput(big);
  if (sections.has('sim')) sim(big);
  if (sections.has('trace')) trace();
  results.peakRssMiB = peakRssMiB();
  results.wallS = (performance.now() - t0) / 1000;
  console.log(`\npeak RSS ${fmt(peakRssMiB())} MiB, ${fmt(results.wallS as number)} s`);
  const file = join(import.meta.dirname, 'results.json');
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`results: ${file}`);
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
