import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  escrowCeilingMinor,
  explainEnsembleSpec,
  parseEnsembleSpec,
  serializeEnsembleSpec,
  totalGpus,
} from '../src';
import { expectValid } from './helpers';

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'docs', 'examples');
const files = readdirSync(EXAMPLES)
  .filter((f) => /\.(ya?ml|json)$/.test(f))
  .sort();
const load = (f: string) => {
  const source = readFileSync(join(EXAMPLES, f), 'utf8');
  return { source, result: parseEnsembleSpec(source, { filename: f }) };
};

describe('docs/examples', () => {
  it('has at least ten examples', () => expect(files.length).toBeGreaterThanOrEqual(10));

  it.each(files)('%s is valid, explained by a header comment, and round-trips', (f) => {
    const { source, result } = load(f);
    const spec = expectValid(result);
    const header = source.split('\n').filter((l) => l.startsWith('#') && !l.includes('yaml-language-server'));
    expect(header.join('\n').length).toBeGreaterThan(150);
    expect(source).toMatch(/^# yaml-language-server: \$schema=\.\.\/ensemble-spec\.schema\.json/);
    const again = expectValid(parseEnsembleSpec(serializeEnsembleSpec(spec)));
    expect(again).toEqual(spec);
  });

  const spec = (f: string) => expectValid(load(f).result);
  const only = (f: string) => spec(f).allocations[0]!;

  it('01: four A100-class GPUs on one node', () => {
    const a = only('01-a100x4-one-node.yaml');
    expect(a.resources.gpus).toMatchObject({
      count: 4,
      vendor: 'nvidia',
      minVramBytes: 40e9,
      minComputeCapability: { major: 8, minor: 0 },
    });
    expect(a.distributed?.maxNodes).toBe(1);
  });

  it('02: eight consumer GPUs of at least 8 GB across up to four hosts', () => {
    const a = only('02-consumer-8x8gb.yaml');
    expect(a.resources.gpus).toMatchObject({ count: 8, minVramBytes: 8e9 });
    expect(a.distributed).toMatchObject({ maxNodes: 4, gpusPerNode: { min: 2, max: 8 } });
  });

  it('03: sixteen H100-class GPUs with ≥ 100 Gbps and < 2 ms between nodes', () => {
    const s = spec('03-h100x16-fast-fabric.yaml');
    const a = s.allocations[0]!;
    expect(a.distributed?.interconnect).toEqual({ minBandwidthBps: 100e9, maxRttUs: 2000, sameSite: true });
    expect(explainEnsembleSpec(s)).toContain(
      '16 GPUs, NVIDIA, model H100 or H200, ≥ 80 GB each, compute ≥ 9.0, CUDA ≥ 12.2, ≥ 600 BF16 TFLOPS, all the same model, on exactly 2 nodes, 8 GPUs per node, packed onto as few nodes as possible, ≥ 100 Gbps between nodes, < 2 ms round trip between nodes, all at one site',
    );
    // 16 GPUs × 3.90 USDC × 72 h
    expect(escrowCeilingMinor(s)).toBe(16n * 3_900_000n * 72n);
  });

  it('04: AMD ROCm MI250/MI300', () => {
    expect(only('04-amd-rocm-mi300.yaml').resources.gpus).toMatchObject({
      vendor: 'amd',
      amdArchitectures: ['gfx90a', 'gfx942'],
      rocm: '>=6.0.0',
      cuda: null,
    });
  });

  it('05: Horovod', () => expect(only('05-horovod-mpi.yaml').distributed?.framework).toBe('horovod'));

  it('06: spread-out federated learning', () => {
    const s = spec('06-federated-spread.yaml');
    const clients = s.allocations.find((a) => a.name === 'clients')!;
    expect(clients.distributed).toMatchObject({
      placement: 'spread',
      maxNodes: 6,
      gpusPerNode: { min: 1, max: 1 },
    });
    expect(s.edgeConstraints).toHaveLength(1);
  });

  it('07: a long-running inference service, not a gang', () => {
    const a = only('07-inference-service.yaml');
    expect(a).toMatchObject({ type: 'service', distributed: null, ranks: 1, maxDurationMs: 30 * 86_400_000 });
  });

  it('08: mixed models allowed', () =>
    expect(only('08-mixed-models.yaml').resources.gpus?.mixedModels).toBe(true));

  it('09: a CPU-only Gloo DDP job the process executor can run', () => {
    const a = only('09-cpu-gloo-ddp.yaml');
    expect(a).toMatchObject({ executor: 'process', ranks: 2, resources: { gpus: null } });
    expect(a.execution.cmd.slice(0, 2)).toEqual(['/usr/bin/python3', 'docs/examples/jobs/ddp_train.py']);
    expect(readFileSync(join(EXAMPLES, 'jobs', 'ddp_train.py'), 'utf8')).toMatch(/init_method="env:\/\/"/);
  });

  it('10: pinned to a subnet with a budget', () => {
    const s = spec('10-subnet-budget.yaml');
    expect(s.subnet).toBe('eu-research');
    expect(s.budget).toEqual({
      asset: 'USDC',
      decimals: 6,
      maxPricePerGpuHourMinor: '2500000',
      maxTotalMinor: '150000000',
    });
    expect(escrowCeilingMinor(s)).toBe(150_000_000n); // capped: 4 × 2.50 × 16 h = 160 USDC
  });

  it('11: several allocations', () => {
    const s = spec('11-trainer-ps-dashboard.yaml');
    expect(s.allocations.map((a) => a.name)).toEqual(['dashboard', 'ps', 'trainer']);
    expect(totalGpus(s)).toBe(16);
    expect(s.nodes[0]).toMatchObject({ name: 'control', allocations: ['dashboard', 'ps'] });
  });
});
