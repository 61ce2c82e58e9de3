/**
 * Benchmark: parse + validate + normalize a 4,096-GPU ensemble spec (target: < 50 ms), next to a
 * baseline measured in the same run on the same document — plain `yaml` parse, and `JSON.parse` of
 * its JSON form — so the figures mean something on any machine.
 *
 *   npm run bench:ensemble-spec            (or: npx tsx bench/ensemble-spec/run.ts [--runs N])
 *
 * Two shapes of 4,096 GPUs:
 * - gang: one allocation `count: 4096` with every requirement set — how the format asks for 4,096
 *   GPUs. This is the < 50 ms target (the exit status fails when its p99 misses it).
 * - wide: 512 allocations of 8 GPUs, each with location rules and ports, plus 512 edge constraints
 *   (NuNet's one-allocation-per-host style, ~260 KiB). A stress case: its time is dominated by the
 *   `yaml` library itself, so it is reported as a ratio to the plain `yaml.parse` baseline.
 */
import { parse as parseYaml, stringify } from 'yaml';
import { parseEnsembleSpec, totalGpus } from '@gpunet/ensemble-spec';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 300;
const TARGET_MS = 50;

const gang = {
  apiVersion: 'gpunet.io/v1',
  kind: 'Ensemble',
  metadata: { name: 'gang-4096', labels: { team: 'foundation' } },
  max_duration: '7d',
  budget: { asset: 'USDC', max_price_per_gpu_hour: '2.10', max_total: '1500000' },
  allocations: {
    trainer: {
      execution: {
        image: 'nvcr.io/nvidia/nemo:24.07',
        cmd: ['python', 'pretrain.py', '--tp', '8', '--pp', '8', '--dp', '64'],
        env: Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`OPT_${i}`, `value-${i}`])),
      },
      resources: {
        cpu: { cores: 12 },
        ram: { size: '120GiB' },
        disk: { size: '2TB' },
        gpus: {
          count: 4096,
          vendor: 'nvidia',
          models: ['H100', 'H200', 'B200'],
          min_vram: '80GB',
          min_compute_capability: '9.0',
          cuda: '>=12.2 <13',
          min_tflops: { bf16: 700, fp8: 1400 },
        },
      },
      distributed: {
        framework: 'torchrun',
        gpus_per_node: { min: 8, max: 8 },
        max_nodes: 512,
        interconnect: { min_bandwidth: '200Gbps', max_rtt: '2ms', same_site: true },
      },
      failure_recovery: {
        strategy: 'restart_all',
        max_restarts: 50,
      },
      location: { accept: [{ continent: 'EU' }, { continent: 'NA' }], reject: [{ asn: 64512 }] },
    },
  },
};

const wideAllocations: Record<string, unknown> = {};
for (let i = 0; i < 512; i++) {
  wideAllocations[`host-${i}`] = {
    execution: {
      image: 'ghcr.io/example/worker:1',
      cmd: ['python', 'worker.py', '--shard', String(i)],
      env: { SHARD: String(i) },
    },
    resources: {
      cpu: { cores: 16 },
      ram: { size: '256GiB' },
      gpus: { count: 8, vendor: 'nvidia', min_vram: '40GB', cuda: '>=12.0' },
    },
    ports: [{ private: 9000 + (i % 100) }],
    location: { accept: [{ country: i % 2 === 0 ? 'DE' : 'NL' }] },
  };
}
const wide = {
  apiVersion: 'gpunet.io/v1',
  kind: 'Ensemble',
  metadata: { name: 'wide-4096' },
  max_duration: '1d',
  allocations: wideAllocations,
  edge_constraints: Array.from({ length: 512 }, (_, i) => ({
    between: [`host-${i}`, `host-${(i + 1) % 512}`],
    max_rtt: '5ms',
    min_bandwidth: '100Gbps',
  })),
};

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

const time = (runs: number, fn: () => unknown): { p50: number; p99: number } => {
  for (let i = 0; i < Math.min(20, runs); i++) fn(); // warm up the JIT
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99) };
};

const fmt = (ms: number): string => `${ms.toFixed(3)} ms`;
let failed = false;

for (const [label, doc] of [
  ['gang', gang],
  ['wide', wide],
] as const) {
  const yamlText = stringify(doc);
  const jsonText = JSON.stringify(doc);
  const check = parseEnsembleSpec(yamlText);
  if (!check.ok) throw new Error(`${label} spec is invalid: ${JSON.stringify(check.errors.slice(0, 3))}`);
  if (totalGpus(check.spec) !== 4096) throw new Error(`${label} spec has ${totalGpus(check.spec)} GPUs`);

  const ours = time(RUNS, () => parseEnsembleSpec(yamlText));
  const oursJson = time(RUNS, () => parseEnsembleSpec(jsonText, { format: 'json' }));
  const baseYaml = time(RUNS, () => parseYaml(yamlText));
  const baseJson = time(RUNS, () => JSON.parse(jsonText) as unknown);
  const ok = ours.p99 < TARGET_MS;
  if (label === 'gang') failed ||= !ok;
  console.log(`${label}: 4096 GPUs, ${(yamlText.length / 1024).toFixed(1)} KiB YAML, ${RUNS} runs`);
  const verdict =
    label === 'gang' ? `${ok ? '✓' : '✗'} target p99 < ${TARGET_MS} ms` : '(stress case, no target)';
  console.log(`  parseEnsembleSpec (YAML)  p50 ${fmt(ours.p50)}  p99 ${fmt(ours.p99)}  ${verdict}`);
  console.log(`  parseEnsembleSpec (JSON)  p50 ${fmt(oursJson.p50)}  p99 ${fmt(oursJson.p99)}`);
  console.log(
    `  baseline yaml.parse       p50 ${fmt(baseYaml.p50)}  p99 ${fmt(baseYaml.p99)}  → ours ${(ours.p50 / baseYaml.p50).toFixed(2)}× (p50)`,
  );
  console.log(
    `  baseline JSON.parse       p50 ${fmt(baseJson.p50)}  p99 ${fmt(baseJson.p99)}  → ours ${(ours.p50 / baseJson.p50).toFixed(1)}× (p50)`,
  );
}

console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(1)} MiB`);
if (failed) process.exitCode = 1;
