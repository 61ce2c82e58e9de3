// Builds bench/benchmarking/report-input.json: the profiles of several GPU types and the network
// measured on the namespace testbed, for `npm run benchmark:report`. Sources are labelled:
// - recorded:      real gpu_bench.py runs (one NVIDIA H200 on CUDA; this machine's CPU, Debian torch);
// - simulated:     simulated edges' declared figures with noise (libs/edge-bench), one of them a
//                  provider claiming H100s that perform like T4s;
// - the network:   network-e2e.json, the summary the 10-host e2e test writes (reports/benchmarking/).
//
//   npx tsx bench/benchmarking/sample-input.ts && npm run benchmark:report -- \
//     --input bench/benchmarking/report-input.json --out bench/benchmarking --name report
import { type BenchmarkProfile, BenchmarkProfileSchema, type GpuLink } from '@gpunet/contracts';
import { mulberry32, seedOf } from '@gpunet/netcoord';
import { simulatedProfile } from '@gpunet/edge-bench';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const HERE = import.meta.dirname;
const FIXTURES = resolve(HERE, '../../tools/gpu-bench/fixtures');
const AT = Date.parse('2026-01-01T00:00:00Z');
const WEEK = 7 * 24 * 3600_000;
const GiB = 1024 ** 3;

const fixture = (name: string): BenchmarkProfile =>
  BenchmarkProfileSchema.parse(JSON.parse(readFileSync(resolve(FIXTURES, name), 'utf8')));

interface Box {
  name: string;
  model: string;
  count: number;
  vramGiB: number;
  vendor?: 'nvidia' | 'amd';
  link?: GpuLink['kind'];
  lanes?: number;
  behavesLike?: string;
}

const simulated = (box: Box) => {
  const gpus = Array.from({ length: box.count }, (_, i) => ({
    index: i,
    uuid: `SIM-${box.vendor ?? 'nvidia'}-${i}`,
    vendor: box.vendor ?? ('nvidia' as const),
    model: box.model,
    vramBytes: box.vramGiB * GiB,
  }));
  const links: GpuLink[] = [];
  for (let a = 0; a < box.count; a++)
    for (let b = a + 1; b < box.count; b++)
      links.push({
        vendor: box.vendor ?? 'nvidia',
        a,
        b,
        kind: box.link ?? 'phb',
        lanes: box.link === 'nvlink' ? (box.lanes ?? 12) : null,
      });
  const profile = simulatedProfile({
    gpus,
    links,
    declared: box.behavesLike ? () => ({ behavesLike: box.behavesLike }) : undefined,
    rng: mulberry32(seedOf(box.name)),
    nowMs: AT,
    ttlMs: WEEK,
    profileId: `sample-${box.name}`,
  });
  return {
    name: box.name,
    source: 'simulated' as const,
    claim: {
      simulated: true,
      gpus: gpus.map(({ index, uuid, model, vramBytes }) => ({ index, uuid, model, vramBytes })),
    },
    profile,
  };
};

const h200 = fixture('h200.recorded.profile.json');
const cpu = fixture('cpu-epyc.recorded.profile.json');
const providers = [
  {
    name: 'h200-node',
    source: 'recorded' as const,
    claim: {
      simulated: false,
      gpus: [
        {
          index: 0,
          uuid: h200.devices[0]!.uuid!,
          model: 'NVIDIA H200',
          vramBytes: h200.devices[0]!.memoryBytes!,
        },
      ],
    },
    profile: h200,
  },
  simulated({
    name: 'a100-box',
    model: 'NVIDIA A100-SXM4-80GB',
    count: 8,
    vramGiB: 80,
    link: 'nvlink',
    lanes: 12,
  }),
  simulated({
    name: 'mi300x-box',
    model: 'AMD Instinct MI300X',
    count: 8,
    vramGiB: 192,
    vendor: 'amd',
    link: 'xgmi',
  }),
  simulated({ name: 'rtx4090-pc', model: 'NVIDIA GeForce RTX 4090', count: 2, vramGiB: 24 }),
  simulated({ name: 'l4-cloud', model: 'NVIDIA L4', count: 1, vramGiB: 24 }),
  simulated({ name: 't4-cloud', model: 'Tesla T4', count: 1, vramGiB: 16 }),
  simulated({ name: 'fake-h100', model: 'NVIDIA H100 80GB HBM3', count: 1, vramGiB: 80, behavesLike: 'T4' }),
  { name: 'dev-cpu', source: 'recorded' as const, claim: { simulated: false, gpus: [] }, profile: cpu },
];

interface E2eSummary {
  pairs: number;
  probedPairs: number;
  unprobedPairs: number;
  medianRttError: number;
  maxThroughputError: number;
  coordinates: { host: string; x: number; y: number; height: number; site: string }[];
  links: {
    a: string;
    b: string;
    rttUs: number;
    throughputBitsPerSecond: number | null;
    sameSite: boolean;
    expectedBitsPerSecond: number | null;
  }[];
}
const e2e = JSON.parse(readFileSync(resolve(HERE, 'network-e2e.json'), 'utf8')) as E2eSummary;

writeFileSync(
  resolve(HERE, 'report-input.json'),
  `${JSON.stringify(
    {
      title: 'gpunet benchmark report (sample)',
      generatedAt: new Date(AT).toISOString(),
      providers,
      network: {
        hosts: e2e.coordinates.map((c) => ({ id: c.host, x: c.x, y: c.y, height: c.height, site: c.site })),
        links: e2e.links,
        accuracy: {
          pairs: e2e.pairs,
          probedPairs: e2e.probedPairs,
          unprobedPairs: e2e.unprobedPairs,
          medianRttError: e2e.medianRttError,
          maxThroughputError: e2e.maxThroughputError,
        },
        note:
          'Measured by services/benchmarking/test/network.e2e.spec.ts: 10 hosts in network namespaces, tc tbf rates of ' +
          '10–80 Mbit/s, WAN delays between five sites added in user space (no netem in this kernel).',
      },
    },
    null,
    2,
  )}\n`,
);
process.stdout.write('wrote bench/benchmarking/report-input.json\n');
