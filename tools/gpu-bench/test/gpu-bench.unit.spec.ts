import { BenchmarkProfileSchema } from '@gpunet/contracts';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const HERE = resolve(import.meta.dirname, '..');
const fixture = (name: string): unknown => JSON.parse(readFileSync(resolve(HERE, 'fixtures', name), 'utf8'));

describe('gpu_bench.py', () => {
  it('passes its Python unit tests (arithmetic, timing loop, the GPU path on a fake runtime, the reconstructed H200 fixture)', () => {
    // Needs only a Python 3 interpreter: the tests never import torch.
    const run = spawnSync(
      '/usr/bin/python3',
      ['-B', '-m', 'unittest', 'discover', '-s', HERE, '-p', 'test_*.py'],
      {
        cwd: HERE,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(run.stderr).toMatch(/\nOK\s*$/);
    expect(run.status).toBe(0);
  });

  it('keeps the profile recorded on an H200 (driver 580.159.04, 2026-12-04) in the contract format', () => {
    const h200 = BenchmarkProfileSchema.parse(fixture('h200.recorded.profile.json'));
    expect(h200.kind).toBe('gpu');
    expect(h200.runner).toMatchObject({ torch: '2.11.0+cu130', backend: 'cuda 13.0' });
    expect(h200.devices).toHaveLength(1);
    expect(h200.devices[0]).toMatchObject({ name: 'NVIDIA H200', kind: 'cuda', memoryBytes: 150109880320 });
    expect(h200.devices[0]!.matmulTflops).toEqual({ fp32: 51.27, tf32: 353.4, fp16: 674.6, bf16: 699.5 });
    expect(h200.notes).toEqual(['peer suite skipped: one GPU']);
  });

  it('keeps the other fixtures in the contract format: the reconstructed H200 (fake runtime) and the recorded CPU run', () => {
    const h200 = BenchmarkProfileSchema.parse(fixture('h200.reconstructed.profile.json'));
    expect(h200.kind).toBe('gpu');
    expect(h200.notes[0]).toMatch(/^RECONSTRUCTED, not recorded/);
    expect(h200.devices[0]).toMatchObject({ name: 'NVIDIA H200', kind: 'cuda' });
    const cpu = BenchmarkProfileSchema.parse(fixture('cpu-epyc.recorded.profile.json'));
    expect(cpu.kind).toBe('cpu');
    expect(cpu.devices[0]!.matmulTflops.fp32).toBeGreaterThan(0);
  });
});
