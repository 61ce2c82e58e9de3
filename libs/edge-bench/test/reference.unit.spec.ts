import { BenchmarkProfileSchema } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { findReference, GPU_REFERENCE, SIMULATED_NOTE, simulatedProfile, torchBenchmarkArgs } from '../src';

describe('findReference', () => {
  it.each([
    ['NVIDIA H200', 'H200'],
    ['NVIDIA H100 80GB HBM3', 'H100 SXM'],
    ['NVIDIA H100 PCIe', 'H100 PCIe'],
    ['NVIDIA H100 NVL', 'H100 NVL'],
    ['H100', 'H100 PCIe'],
    ['NVIDIA A100-SXM4-80GB', 'A100 SXM 80GB'],
    ['NVIDIA A100 80GB PCIe', 'A100 PCIe 80GB'],
    ['NVIDIA A100-PCIE-40GB', 'A100 40GB'],
    ['NVIDIA L40S', 'L40S'],
    ['NVIDIA L4', 'L4'],
    ['NVIDIA A10', 'A10'],
    ['Tesla T4', 'T4'],
    ['Tesla V100-SXM2-32GB', 'V100'],
    ['NVIDIA GeForce RTX 4090', 'RTX 4090'],
    ['AMD Instinct MI300X', 'MI300X'],
    ['AMD Instinct MI250X', 'MI250X (one GCD)'],
  ])('%s → %s', (reported, expected) => {
    expect(findReference(reported)?.name).toBe(expected);
  });

  it('knows nothing of models outside the table (verification then says "unverifiable")', () => {
    expect(findReference('NVIDIA L40')).toBeNull();
    expect(findReference('AMD EPYC 9654')).toBeNull();
  });

  it('keeps sane figures: floors below typical efficiency, every entry reachable by its own name', () => {
    for (const ref of GPU_REFERENCE) {
      expect(ref.tolerance.matmul).toBeLessThan(0.75);
      expect(ref.tolerance.memoryBandwidth).toBeLessThan(0.88);
      expect(findReference(ref.matches[0]!)?.name).toBe(ref.name);
    }
  });
});

describe('simulatedProfile', () => {
  const h100 = (index: number) => ({
    index,
    uuid: `SIM-nvidia-${index}`,
    vendor: 'nvidia' as const,
    model: 'NVIDIA H100 80GB HBM3',
    vramBytes: 80e9,
  });
  const base = {
    rng: () => 0.5,
    nowMs: Date.parse('2030-01-01T00:00:00Z'),
    ttlMs: 3_600_000,
    profileId: 'sim-1',
  };

  it('reports the claimed model’s typical figures, labelled simulated, valid for the TTL', () => {
    const p = BenchmarkProfileSchema.parse(simulatedProfile({ ...base, gpus: [h100(0)] }));
    expect(p.kind).toBe('simulated');
    expect(p.notes[0]).toBe(SIMULATED_NOTE);
    expect(p.devices[0]).toMatchObject({ kind: 'simulated', uuid: 'SIM-nvidia-0', memoryBytes: 80e9 });
    expect(p.devices[0]!.matmulTflops.bf16).toBeCloseTo(989.4 * 0.75, 0);
    expect(p.expiresAt).toBe('2030-01-01T01:00:00.000Z');
  });

  it('adds bounded noise', () => {
    let i = 0;
    const rng = () => [0, 0.999][i++ % 2]!;
    const p = simulatedProfile({ ...base, rng, gpus: [h100(0)], noise: 0.05 });
    const bf16 = p.devices[0]!.matmulTflops.bf16!;
    expect(bf16 / (989.4 * 0.75)).toBeGreaterThanOrEqual(0.95);
    expect(bf16 / (989.4 * 0.75)).toBeLessThanOrEqual(1.05);
  });

  it('performs like another model when declared so (a fake H100) and says so', () => {
    const p = simulatedProfile({ ...base, gpus: [h100(0)], declared: () => ({ behavesLike: 'T4' }) });
    expect(p.devices[0]!.name).toBe('NVIDIA H100 80GB HBM3');
    expect(p.devices[0]!.matmulTflops.fp16).toBeCloseTo(65 * 0.75, 0);
    expect(p.devices[0]!.matmulTflops.bf16).toBeNull();
    expect(p.notes).toContain('GPU 0: declared to perform like T4');
  });

  it('derives GPU↔GPU figures from the declared NVLink lanes', () => {
    const p = simulatedProfile({
      ...base,
      gpus: [h100(0), h100(1)],
      links: [{ vendor: 'nvidia', a: 0, b: 1, kind: 'nvlink', lanes: 18 }],
    });
    expect(p.peers).toEqual([{ a: 0, b: 1, GBps: 360, p2p: true }]);
  });
});

describe('torchBenchmarkArgs', () => {
  it('passes bounds, ids and options to gpu_bench.py', () => {
    const args = torchBenchmarkArgs({
      maxDurationMs: 70_000,
      ttlMs: 86_400_000,
      suites: ['matmul', 'memory'],
      quick: true,
      gpuUuids: { 0: 'GPU-a', 1: 'GPU-b' },
      profileId: 'p1',
    });
    expect(args.slice(2)).toEqual([
      '--device',
      'auto',
      '--max-seconds',
      '60',
      '--ttl-seconds',
      '86400',
      '--suites',
      'matmul,memory',
      '--quick',
      '--profile-id',
      'p1',
      '--uuids',
      '0=GPU-a,1=GPU-b',
    ]);
  });
});
