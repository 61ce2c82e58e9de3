import { seededRandom } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import { dueChallenges, type ProviderChallengeView } from '../src/domain/challenge-schedule';
import { claimedFigure } from '../src/domain/claimed-figure';
import { h100Claim, profileFixture, simulatedProfileFor } from './fixtures';

const HOUR = 3_600_000;
const policy = { idleIntervalMs: 6 * HOUR, maxPerTick: 50 };
const view = (id: string, over: Partial<ProviderChallengeView> = {}): ProviderChallengeView => ({
  providerId: id,
  online: true,
  busy: false,
  pending: false,
  gpus: [
    { uuid: `${id}-0`, status: 'verified' },
    { uuid: `${id}-1`, status: 'verified' },
  ],
  jobs: [],
  ...over,
});
const never = () => 0.999_999;
const always = () => 0;

describe('dueChallenges', () => {
  it.each([
    [
      'a pending GPU is challenged for its registration',
      view('a', { gpus: [{ uuid: 'a-0', status: 'pending' }] }),
      never,
      [{ providerId: 'a', gpuUuid: 'a-0', reason: 'registration', jobId: null }],
    ],
    [
      'not while the provider is busy',
      view('a', { busy: true, gpus: [{ uuid: 'a-0', status: 'pending' }] }),
      always,
      [],
    ],
    [
      'not when a challenge is out',
      view('a', { pending: true, gpus: [{ uuid: 'a-0', status: 'pending' }] }),
      always,
      [],
    ],
    ['not when offline', view('a', { online: false }), always, []],
    ['simulated GPUs never', view('a', { gpus: [{ uuid: 'a-0', status: 'simulated' }] }), always, []],
    [
      'an idle GPU when its draw fires',
      view('a'),
      always,
      [{ providerId: 'a', gpuUuid: 'a-0', reason: 'idle', jobId: null }],
    ],
    ['an idle GPU not when it does not', view('a'), never, []],
    [
      'a running job’s GPU at its rate, the job named, busy or not',
      view('a', { busy: true, jobs: [{ jobId: 'j', gpuUuids: ['a-1'], spotChecksPerGpuHour: 60 }] }),
      always,
      [{ providerId: 'a', gpuUuid: 'a-1', reason: 'spot-check', jobId: 'j' }],
    ],
    [
      'no spot check at rate 0',
      view('a', { busy: true, jobs: [{ jobId: 'j', gpuUuids: ['a-1'], spotChecksPerGpuHour: 0 }] }),
      always,
      [],
    ],
  ] as const)('%s', (_name, v, rng, expected) => {
    expect(dueChallenges([v], HOUR, rng, policy)).toEqual(expected);
  });

  it('fires idle challenges about once per interval per GPU (Poisson), deterministically for a seed', () => {
    const run = (seed: string) => {
      const rng = seededRandom(seed).next;
      let n = 0;
      // 1-minute ticks for 600 hours: 2 GPUs × 100 intervals ⇒ about 200.
      for (let t = 0; t < 600 * 60; t++)
        n += dueChallenges(
          [
            view('a', {
              gpus: [
                { uuid: 'a-0', status: 'verified' },
                { uuid: 'a-1', status: 'unverified' },
              ],
            }),
          ],
          60_000,
          rng,
          policy,
        ).length;
      return n;
    };
    const n = run('idle');
    expect(n).toBe(run('idle'));
    expect(n).toBeGreaterThan(160);
    expect(n).toBeLessThan(240);
  });

  it('spot-checks at the job’s rate per GPU-hour', () => {
    const rng = seededRandom('spot').next;
    let n = 0;
    const v = view('a', { busy: true, jobs: [{ jobId: 'j', gpuUuids: ['a-0'], spotChecksPerGpuHour: 2 }] });
    for (let t = 0; t < 100 * 60; t++) n += dueChallenges([v], 60_000, rng, policy).length;
    expect(n).toBeGreaterThan(160);
    expect(n).toBeLessThan(240);
  });

  it('gives each provider at most one, registration first, and caps the tick', () => {
    const v = view('a', {
      gpus: [
        { uuid: 'a-0', status: 'verified' },
        { uuid: 'a-1', status: 'pending' },
      ],
    });
    expect(dueChallenges([v, view('b')], HOUR, always, { ...policy, maxPerTick: 1 })).toEqual([
      { providerId: 'a', gpuUuid: 'a-1', reason: 'registration', jobId: null },
    ]);
  });
});

describe('claimedFigure', () => {
  it('takes a measured GPU’s fp16 matmul TFLOPS, matched by uuid', () => {
    const claim = h100Claim(1);
    const profile = simulatedProfileFor(claim);
    const fp16 = profile.devices[0]!.matmulTflops.fp16!;
    expect(claimedFigure(claim.gpus[0]!, profile)).toEqual({
      dtype: 'fp16',
      tflops: fp16,
      source: 'measured',
    });
  });

  it('takes a CPU’s fp32', () => {
    const profile = profileFixture('cpu-epyc.recorded.profile.json');
    const device = profile.devices[0]!;
    expect(claimedFigure({ index: 0, uuid: 'none', model: 'cpu' }, profile)).toEqual({
      dtype: 'fp32',
      tflops: device.matmulTflops.fp32,
      source: 'measured',
    });
  });

  it('falls back to the reference table × typical efficiency, as placement does', () => {
    // H100 SXM: 989.4 dense fp16 × 0.75.
    expect(claimedFigure({ index: 0, uuid: 'GPU-x', model: 'NVIDIA H100 80GB HBM3' }, null)).toEqual({
      dtype: 'fp16',
      tflops: 742.1,
      source: 'reference',
    });
    expect(claimedFigure({ index: 0, uuid: 'GPU-x', model: 'Mystery Accelerator 9000' }, null)).toBeNull();
  });
});
