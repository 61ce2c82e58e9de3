import { describe, expect, it } from 'vitest';
import { type Claim, verifyClaim } from '../src/domain/verification';
import { h100Claim, profileFixture, simulatedProfileFor } from './fixtures';

const failedMetrics = (claim: Claim, profile: Parameters<typeof verifyClaim>[1]) =>
  verifyClaim(claim, profile).failed.map((c) => `${c.subject}:${c.metric}:${c.verdict}`);

describe('verifyClaim', () => {
  it('passes a GPU that performs like the model it claims (figures at typical efficiency)', () => {
    const claim = h100Claim(2);
    const result = verifyClaim(claim, simulatedProfileFor(claim));
    expect(result.failed).toEqual([]);
    const bf16 = result.passed.find((c) => c.metric === 'matmul-bf16-tflops')!;
    expect(bf16).toMatchObject({
      reference: 'H100 SXM',
      published: 989.4,
      expectedMin: 494.7,
      verdict: 'ok',
    });
    expect(bf16.ratio).toBeCloseTo(0.75, 2);
  });

  it('flags an "H100" that benchmarks like a T4, with the evidence per metric', () => {
    const claim = h100Claim(1);
    const failed = verifyClaim(claim, simulatedProfileFor(claim, 'T4')).failed;
    expect(failed.map((c) => c.metric)).toEqual([
      'matmul-fp32-tflops',
      'matmul-fp16-tflops',
      'memory-bandwidth-gbps',
    ]);
    expect(failed[1]).toMatchObject({
      subject: 'SIM-nvidia-0',
      claimed: 'NVIDIA H100 80GB HBM3',
      reference: 'H100 SXM',
      published: 989.4,
      expectedMin: 494.7,
      verdict: 'below-tolerance',
    });
    expect(failed[1]!.measured).toBeCloseTo(65 * 0.75, 0);
    expect(failed[1]!.ratio).toBeLessThan(0.06);
  });

  it.each([
    [
      'the profile lacks a claimed GPU',
      2,
      1,
      ['host:device-count:below-tolerance', 'SIM-nvidia-1:device-present:missing'],
    ],
    ['the profile has more GPUs than claimed', 1, 2, []],
  ])('device count: %s', (_name, claimed, measured, expected) => {
    const profile = simulatedProfileFor(h100Claim(measured));
    expect(failedMetrics(h100Claim(claimed), profile)).toEqual(expected);
  });

  it('flags a GPU with less memory than claimed', () => {
    const claim = h100Claim(1);
    const profile = simulatedProfileFor(claim);
    const shrunk = { ...profile, devices: [{ ...profile.devices[0]!, memoryBytes: 16 * 1024 ** 3 }] };
    expect(failedMetrics(claim, shrunk)).toEqual(['SIM-nvidia-0:memory-bytes:below-tolerance']);
  });

  it('flags detected hardware that reports a simulated profile, and GPUs claimed on a CPU-only host', () => {
    const claim = h100Claim(1, false);
    expect(failedMetrics(claim, simulatedProfileFor(claim))).toEqual(['SIM-nvidia-0:device-present:missing']);
    expect(failedMetrics(claim, profileFixture('cpu-epyc.recorded.profile.json'))).toEqual([
      'host:device-count:below-tolerance',
      'SIM-nvidia-0:device-present:missing',
    ]);
  });

  it('verifies the profile recorded on an H200 (driver 580.159.04, 2026-12-04) against an H200 claim', () => {
    // gpu_bench.py on CUDA, tools/gpu-bench/device-check.sh: real figures, not a fake runtime's.
    const profile = profileFixture('h200.recorded.profile.json');
    const claim: Claim = {
      simulated: false,
      gpus: [
        { index: 0, uuid: profile.devices[0]!.uuid!, model: 'NVIDIA H200', vramBytes: 143771 * 1024 ** 2 },
      ],
    };
    const result = verifyClaim(claim, profile);
    expect(result.failed).toEqual([]);
    const measured = Object.fromEntries(
      result.passed.map((c) => [c.metric, [c.reference, c.published, c.measured]]),
    );
    expect(measured).toMatchObject({
      'matmul-fp32-tflops': ['H200', 67, 51.27],
      'matmul-bf16-tflops': ['H200', 989.4, 699.5],
      'memory-bandwidth-gbps': ['H200', 4800, 4265],
    });
  });

  it('does not accuse a model outside the reference table, and treats figures a run skipped as missing', () => {
    const claim: Claim = {
      simulated: true,
      gpus: [{ index: 0, uuid: 'SIM-nvidia-0', model: 'NVIDIA L40', vramBytes: 48e9 }],
    };
    const profile = simulatedProfileFor({ ...claim }, 'L40S');
    const result = verifyClaim(claim, profile);
    expect(result.failed).toEqual([]);
    expect(result.passed.map((c) => c.verdict)).toContain('unverifiable');
    const h100 = h100Claim(1);
    const partial = simulatedProfileFor(h100);
    const skipped = {
      ...partial,
      devices: [
        { ...partial.devices[0]!, matmulTflops: { ...partial.devices[0]!.matmulTflops, tf32: null } },
      ],
    };
    expect(verifyClaim(h100, skipped).failed).toEqual([]);
    const nothing = {
      ...partial,
      devices: [
        {
          ...partial.devices[0]!,
          matmulTflops: { fp32: null, tf32: null, fp16: null, bf16: null },
          memoryBandwidthGBps: null,
        },
      ],
    };
    expect(verifyClaim(h100, nothing).failed).toHaveLength(5);
  });
});
