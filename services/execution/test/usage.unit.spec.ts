import type { LaunchedRank } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { gpuClassOf, meterKey, sanitizeGpuClass, usageOf } from '../src/domain/usage';

const rank = (r: number, providerId: string, gpus: string[]): LaunchedRank => ({
  rank: r,
  localRank: 0,
  nodeRank: r,
  allocation: 'main',
  providerId,
  hostId: 'h',
  reservationId: 'res',
  gpuUuids: gpus,
  gpuClass: 'H100-80GB',
  address: '10.0.0.1',
});

describe('usage', () => {
  it.each([
    {
      name: 'a class of the job names the model',
      model: 'NVIDIA H100 80GB HBM3',
      classes: ['A100', 'H100-80GB'],
      is: 'H100-80GB',
    },
    {
      name: 'no class matches: the model as a class',
      model: 'NVIDIA GeForce RTX 4090',
      classes: ['H100'],
      is: 'NVIDIA-GeForce-RTX-4090',
    },
    { name: 'unknown model: the job’s first class', model: null, classes: ['A100-40GB'], is: 'A100-40GB' },
    { name: 'unknown model, any class', model: null, classes: [], is: 'unknown' },
  ])('gpuClassOf: $name', ({ model, classes, is }) => {
    expect(gpuClassOf(model, classes)).toBe(is);
  });

  it('sanitizes odd model names into class tokens', () => {
    expect(sanitizeGpuClass('  (weird) GPU/α  ')).toBe('weird-GPU');
    expect(sanitizeGpuClass('***')).toBe('unknown');
    expect(sanitizeGpuClass('x'.repeat(100))).toHaveLength(64);
  });

  it('sums GPUs × wall seconds per provider over every attempt, rounding down', () => {
    const ranks = [rank(0, 'p-a', ['g0', 'g1']), rank(1, 'p-a', ['g2']), rank(2, 'p-b', ['g3'])];
    const meter = {
      [meterKey(1, 0)]: 10.6,
      [meterKey(1, 1)]: 10,
      [meterKey(1, 2)]: 3,
      [meterKey(2, 0)]: 5,
      // a rank that never started in attempt 2 has no reading
    };
    expect(usageOf(ranks, 2, meter)).toEqual([
      { providerId: 'p-a', gpuClass: 'H100-80GB', gpus: 3, gpuSeconds: Math.floor(2 * 10.6 + 10 + 2 * 5) },
      { providerId: 'p-b', gpuClass: 'H100-80GB', gpus: 1, gpuSeconds: 3 },
    ]);
  });
});
